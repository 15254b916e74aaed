//! Varying linking: optimise what a vertex shader passes to a fragment
//! shader, on both shaders at once.
//!
//! The design is Mesa's `nir_opt_varyings` (`spec/nir-varying-linking.txt`
//! in the shared folder), rebuilt on Lathe's IR, plus the forward code
//! motion it leaves as a draft. The pass works on scalar 32- and 16-bit
//! varyings (`store_output slot comp` in the producer, `load_input slot
//! comp interp` in the consumer, which the IR already is). One file per
//! step, run in this order by [`link`]:
//!
//! 1. [`slots`]: which slots may be optimised and how (VARn and FOGC
//!    fully; colours, texture coordinates and system values with their
//!    special cases; everything else untouched).
//! 2. [`remove`]: unread outputs and unwritten inputs.
//! 3. [`propagate`]: constants, uniforms, UBO loads and uniform
//!    expressions move into the consumer (cost-limited by [`LinkCost`]).
//! 4. [`dedup`]: outputs that always hold the same value become one.
//! 5. [`backward`]: consumer code moves into the producer (post-dominator
//!    tree of the SSA-use graph, interpolation rules in [`movable`]).
//! 6. [`forward`]: producer code moves into the consumer (dominator tree of
//!    the same graph), where the target's cost callback agrees.
//! 7. [`compact`]: the remaining VARn varyings are packed into vec4 slots
//!    by group and renumbered from VAR0 (two flat 16-bit ones share a
//!    component), colours among themselves.
//!
//! Facts that are not in the IR come in [`LinkOptions`]: which outputs
//! transform feedback captures, whether infinities must survive
//! interpolation, and whether both stages see the same uniforms. Output
//! stores kept only for the fixed function or transform feedback are the
//! design's "no varying" stores: the IR has no such flag, so
//! [`LinkReport::no_varying`] lists them.
//!
//! [`harness`] runs a linked pair through the interpreter (a triangle's
//! vertices, interpolation by qualifier, fragments) to compare it with the
//! original; [`generate`] makes random pairs for it.
//!
//! # Example
//!
//! ```
//! use lathe_passes::link::{link, DefaultCost, LinkOptions};
//! let arena = lathe_ir::Bump::new();
//! let mut vs = lathe_ir::parse(&arena, "shader vertex
//! b0:
//!   %0:f32 = load_input slot=0 comp=0 interp=flat
//!   %1:f32 = const 2.0
//!   %2:f32 = fmul %0, %1
//!   store_output slot=64 comp=0 %0
//!   store_output slot=0 comp=0 %0
//!   store_output slot=1 comp=0 %1
//!   store_output slot=2 comp=0 %2
//!   ret
//! ").unwrap();
//! let mut fs = lathe_ir::parse(&arena, "shader fragment
//! b0:
//!   %0:f32 = load_input slot=0 comp=0 interp=smooth
//!   %1:f32 = load_input slot=1 comp=0 interp=smooth
//!   %2:f32 = fadd %0, %1
//!   store_output slot=0 comp=0 %2
//!   ret
//! ").unwrap();
//! let report = link(&mut vs, &mut fs, &LinkOptions::default(), &DefaultCost).unwrap();
//! // The constant went into the fragment shader, the addition into the
//! // vertex shader: one component is left where there were three.
//! assert_eq!((report.before.components, report.after.components), (3, 1));
//! assert_eq!(lathe_ir::print(&fs), "shader fragment
//! b0:
//!   %0:f32 = load_input slot=0 comp=0 interp=smooth
//!   store_output slot=0 comp=0 %0
//!   ret
//! ");
//! ```

pub mod backward;
pub mod compact;
pub mod dedup;
pub mod forward;
pub mod generate;
mod graph;
pub mod harness;
pub mod movable;
mod pack16;
pub mod propagate;
mod reaching;
pub mod remove;
pub mod slots;
pub mod varyings;

pub use slots::{slot, slot_name};
pub use varyings::{Comp, Count, Varying, count, varyings};

use crate::manager::Pass;
use lathe_ir::{GenericOp, Shader, Stage, ValidationError};

/// Facts about the pipeline that the IR does not carry.
#[derive(Clone, Debug)]
pub struct LinkOptions {
    /// Producer output components captured by transform feedback: kept
    /// even when the consumer does not read them, packed last.
    pub xfb: Vec<Comp>,
    /// Infinities must survive: no code moves across interpolation, and a
    /// propagated float expression reaching an interpolated input is
    /// turned from Inf into NaN as interpolation would.
    pub preserve_inf: bool,
    /// Both stages read the same uniform words and UBOs (Vulkan push
    /// constants and descriptor sets are per pipeline); without it only
    /// constants cross between the stages.
    pub shared_uniforms: bool,
    /// Which steps run (all by default), for measuring each one.
    pub steps: Steps,
}

impl Default for LinkOptions {
    fn default() -> Self {
        LinkOptions {
            xfb: Vec::new(),
            preserve_inf: false,
            shared_uniforms: true,
            steps: Steps::default(),
        }
    }
}

/// Switches for the optional steps (slot classification always applies).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Steps {
    pub remove: bool,
    pub propagate: bool,
    pub dedup: bool,
    pub backward: bool,
    pub forward: bool,
    pub compact: bool,
}

impl Default for Steps {
    fn default() -> Self {
        Steps::ALL
    }
}

impl Steps {
    pub const ALL: Steps = Steps {
        remove: true,
        propagate: true,
        dedup: true,
        backward: true,
        forward: true,
        compact: true,
    };
    pub const NONE: Steps = Steps {
        remove: false,
        propagate: false,
        dedup: false,
        backward: false,
        forward: false,
        compact: false,
    };
    /// The step names in the order they run.
    pub const NAMES: [&'static str; 6] = [
        "remove",
        "propagate",
        "dedup",
        "backward",
        "forward",
        "compact",
    ];

    /// The steps up to and including the `n`-th of [`Steps::NAMES`].
    pub fn first(n: usize) -> Steps {
        let on = |k: usize| k < n;
        Steps {
            remove: on(0),
            propagate: on(1),
            dedup: on(2),
            backward: on(3),
            forward: on(4),
            compact: on(5),
        }
    }
}

/// The target's say in moving work between stages.
pub trait LinkCost {
    /// Cost of one instruction (constants are free by default).
    fn op_cost(&self, op: GenericOp) -> u32 {
        match op {
            GenericOp::Const { .. } => 0,
            _ => 1,
        }
    }

    /// The largest uniform expression copied into the consumer, which runs
    /// it per fragment instead of per vertex.
    fn max_uniform_expr_cost(&self) -> u32 {
        4
    }

    /// Is moving `cost` worth of producer work into the consumer worth
    /// `saved` varying components?
    fn forward_worth_it(&self, cost: u32, saved: u32) -> bool {
        cost <= 2 * saved
    }
}

/// The default costs: unit cost per instruction, uniform expressions up to
/// 4 instructions, forward motion of up to 2 instructions per saved
/// component.
#[derive(Clone, Copy, Debug, Default)]
pub struct DefaultCost;

impl LinkCost for DefaultCost {}

/// What linking did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinkReport {
    pub before: Count,
    /// The count after each step that ran, by name.
    pub after_step: Vec<(&'static str, Count)>,
    pub after: Count,
    /// Producer outputs kept only as system values or for transform
    /// feedback (the design's `no_varying` flag).
    pub no_varying: Vec<Comp>,
    /// Producer outputs compaction moved: `(from, to)`.
    pub relocated: Vec<(Comp, Comp)>,
    pub removed_outputs: usize,
    pub removed_inputs: usize,
    pub propagated: usize,
    pub deduplicated: usize,
    pub backward_moves: usize,
    pub forward_moves: usize,
    /// Pairs of flat 16-bit varyings compaction put in one component.
    pub packed_16bit: usize,
    /// Code moved across interpolation (an inexact transformation).
    pub moved_interpolated: bool,
}

/// Why a pair cannot be linked.
#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    #[error("unsupported: linking a {0} shader to a {1} shader (only vertex to fragment)")]
    Stages(&'static str, &'static str),
    #[error("the {0} shader is invalid: {1}")]
    Invalid(&'static str, ValidationError),
}

/// The state every step works on.
pub(crate) struct Link<'x, 'a, 'b> {
    pub(crate) p: &'x mut Shader<'a, GenericOp>,
    pub(crate) c: &'x mut Shader<'b, GenericOp>,
    pub(crate) opts: &'x LinkOptions,
    pub(crate) cost: &'x dyn LinkCost,
    pub(crate) report: LinkReport,
}

pub(crate) fn dce(s: &mut Shader<'_, GenericOp>) {
    // DCE has no failure mode.
    let _changed = crate::dce::Dce.run(s).is_ok_and(|c| c);
}

/// Link a vertex shader (`producer`) with a fragment shader (`consumer`).
pub fn link(
    producer: &mut Shader<'_, GenericOp>,
    consumer: &mut Shader<'_, GenericOp>,
    options: &LinkOptions,
    cost: &dyn LinkCost,
) -> Result<LinkReport, LinkError> {
    if (producer.stage, consumer.stage) != (Stage::Vertex, Stage::Fragment) {
        return Err(LinkError::Stages(
            producer.stage.name(),
            consumer.stage.name(),
        ));
    }
    lathe_ir::validate(producer).map_err(|e| LinkError::Invalid("producer", e))?;
    lathe_ir::validate(consumer).map_err(|e| LinkError::Invalid("consumer", e))?;
    let before = count(producer, consumer);
    let mut l = Link {
        p: producer,
        c: consumer,
        opts: options,
        cost,
        report: LinkReport {
            before,
            ..LinkReport::default()
        },
    };
    let steps = options.steps;
    let tidy = |l: &mut Link<'_, '_, '_>| {
        dce(l.c);
        if steps.remove {
            remove::run(l);
        }
        dce(l.p);
    };
    let record = |l: &mut Link<'_, '_, '_>, name: &'static str| {
        let n = count(l.p, l.c);
        l.report.after_step.push((name, n));
    };
    if steps.remove {
        tidy(&mut l);
        record(&mut l, "remove");
    }
    if steps.propagate {
        propagate::run(&mut l);
        tidy(&mut l);
        record(&mut l, "propagate");
    }
    if steps.dedup {
        dedup::run(&mut l);
        tidy(&mut l);
        record(&mut l, "dedup");
    }
    if steps.backward {
        backward::run(&mut l);
        tidy(&mut l);
        record(&mut l, "backward");
    }
    if steps.forward {
        forward::run(&mut l);
        tidy(&mut l);
        // Forward motion can expose duplicates and dead outputs.
        if steps.dedup {
            dedup::run(&mut l);
            tidy(&mut l);
        }
        record(&mut l, "forward");
    }
    if steps.compact {
        compact::run(&mut l);
        record(&mut l, "compact");
    }
    let stores = varyings::output_stores(l.p);
    let loads = varyings::input_loads(l.c);
    l.report.no_varying = stores
        .keys()
        .copied()
        .filter(|&c| {
            !varyings::is_read(&loads, c) && slots::output_class(c.0) != slots::Class::Fixed
        })
        .collect();
    l.report.after = count(l.p, l.c);
    Ok(l.report)
}
