//! The `Pass` trait, the registry of named passes, and the pass manager
//! that runs a pipeline with validation, dumps and timing.

use lathe_ir::{Opcode, Shader, ValidationError};
use std::time::{Duration, Instant};

/// Why a pipeline could not be built or run.
#[derive(Debug, thiserror::Error)]
pub enum PassError {
    #[error("unknown pass `{name}` (valid passes: {})", known.join(", "))]
    UnknownPass {
        name: String,
        known: Vec<&'static str>,
    },
    #[error("pass `{name}` needs a target (`--target MODEL`)")]
    NeedsTarget { name: String },
    #[error("the input shader is invalid: {0}")]
    InvalidInput(ValidationError),
    #[error("pass `{pass}` failed: {error}")]
    Failed {
        pass: &'static str,
        #[source]
        error: PassFailure,
    },
    #[error("pass `{pass}` produced invalid IR: {error}\n{dump}")]
    InvalidOutput {
        pass: &'static str,
        error: ValidationError,
        dump: String,
    },
}

/// Why a pass could not transform a shader, by pass. The pass manager
/// stops the pipeline and returns it as [`PassError::Failed`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PassFailure {
    #[error(transparent)]
    Ra(#[from] crate::ra::RaError),
    #[error(transparent)]
    LowerSwap(#[from] crate::lower_swap::LowerSwapError),
    #[error(transparent)]
    Legalise(#[from] crate::legalise::LegaliseError),
}

/// A transformation of a shader. Passes work on any vocabulary, asking it
/// questions through [`Opcode`].
pub trait Pass<O: Opcode> {
    /// The name used in pipelines (`dce`, `copy-prop`, ...).
    fn name(&self) -> &'static str;

    /// Transform the shader; returns whether anything changed, or why the
    /// pass cannot handle this shader (the shader may then be partly
    /// rewritten and should be dropped).
    fn run(&mut self, shader: &mut Shader<'_, O>) -> Result<bool, PassFailure>;
}

type Factory<O> = fn() -> Box<dyn Pass<O>>;

/// Builds a pass that asks a target for its facts.
pub type TargetFactory<O> = fn(std::rc::Rc<dyn crate::target::TargetFacts<O>>) -> Box<dyn Pass<O>>;

/// Named passes that pipelines can be built from.
pub struct Registry<O> {
    entries: Vec<(&'static str, &'static str, Factory<O>)>,
    /// Passes that need a target, and the target they get.
    target_entries: Vec<(&'static str, &'static str, TargetFactory<O>)>,
    target: Option<std::rc::Rc<dyn crate::target::TargetFacts<O>>>,
}

impl<O: Opcode> Registry<O> {
    pub fn empty() -> Self {
        Registry {
            entries: Vec::new(),
            target_entries: Vec::new(),
            target: None,
        }
    }

    /// The target-neutral passes of this crate.
    pub fn standard() -> Self {
        let mut r = Self::empty();
        r.register(
            "dce",
            "remove unused side-effect-free instructions and unreachable blocks",
            || Box::new(crate::dce::Dce),
        );
        r.register(
            "copy-prop",
            "remove plain movs whose source and result types match",
            || Box::new(crate::copy_prop::CopyProp),
        );
        r.register(
            "merge-blocks",
            "append a block to its only predecessor when that one jumps to it",
            || Box::new(crate::merge_blocks::MergeBlocks),
        );
        r.register(
            "flatten",
            "turn simple if/else diamonds into straight code, phis into sel",
            || Box::new(crate::flatten::Flatten),
        );
        r.register_backend();
        r
    }

    /// The standard passes with `target` for the backend passes (`group`,
    /// `depth`, `sched`), which ask it for its facts.
    pub fn with_target(target: std::rc::Rc<dyn crate::target::TargetFacts<O>>) -> Self {
        let mut r = Self::standard();
        r.target = Some(target);
        r
    }

    /// The backend passes; they run only once a registry has a target.
    fn register_backend(&mut self) {
        self.register_target_pass(
            "fold-copies",
            "machine IR: read what a same-width register copy (a bit cast) read",
            |t| Box::new(crate::fold_copies::FoldCopies::new(t)),
        );
        self.register_target_pass(
            "fold-sources",
            "read what a constant move or negation read, where the target's encoding takes it",
            |t| Box::new(crate::fold_sources::FoldSources::new(t)),
        );
        self.register_target_pass(
            "group",
            "give collect/split operands their neighbours, copying values that would need two places",
            |t| Box::new(crate::group::Group::new(t)),
        );
        self.register_target_pass(
            "depth",
            "compute each instruction's depth in its block from the target's latencies",
            |t| Box::new(crate::depth::Depth::new(t)),
        );
        self.register_target_pass(
            "sched",
            "list-schedule each block by critical path, watching register pressure",
            |t| Box::new(crate::sched::Sched::new(t)),
        );
        self.register_target_pass(
            "ra",
            "SSA register allocation with live-range splitting and spilling",
            |t| Box::new(crate::ra::Ra::new(t)),
        );
        self.register_target_pass(
            "lower-swap",
            "post-RA: swaps become the target's exchange (or three xors)",
            |t| Box::new(crate::lower_swap::LowerSwap::new(t)),
        );
        self.register_target_pass(
            "legalise",
            "post-RA: the target's hardware rules (nops, sync bits, scoreboards)",
            |t| Box::new(crate::legalise::Legalise::new(t)),
        );
    }

    /// Add (or replace) a named pass that needs the registry's target.
    pub fn register_target_pass(
        &mut self,
        name: &'static str,
        description: &'static str,
        factory: TargetFactory<O>,
    ) {
        self.target_entries.retain(|e| e.0 != name);
        self.target_entries.push((name, description, factory));
    }

    /// Add (or replace) a named pass.
    pub fn register(&mut self, name: &'static str, description: &'static str, factory: Factory<O>) {
        self.entries.retain(|e| e.0 != name);
        self.entries.push((name, description, factory));
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.describe().map(|(n, _)| n).collect()
    }

    /// `(name, description)` pairs of the passes this registry can run
    /// (those needing a target only when it has one).
    pub fn describe(&self) -> impl Iterator<Item = (&'static str, &'static str)> + '_ {
        let plain = self.entries.iter().map(|e| (e.0, e.1));
        let with_target = self.target.is_some().then_some(&self.target_entries);
        plain.chain(with_target.into_iter().flatten().map(|e| (e.0, e.1)))
    }

    pub fn create(&self, name: &str) -> Result<Box<dyn Pass<O>>, PassError> {
        if let Some(e) = self.entries.iter().find(|e| e.0 == name) {
            return Ok((e.2)());
        }
        match (
            self.target_entries.iter().find(|e| e.0 == name),
            &self.target,
        ) {
            (Some(e), Some(t)) => Ok((e.2)(t.clone())),
            (Some(_), None) => Err(PassError::NeedsTarget {
                name: name.to_string(),
            }),
            (None, _) => Err(PassError::UnknownPass {
                name: name.to_string(),
                known: self.names(),
            }),
        }
    }

    /// A pass manager running the named passes in order.
    pub fn pipeline<S: AsRef<str>>(&self, names: &[S]) -> Result<PassManager<O>, PassError> {
        let mut pm = PassManager::new();
        for n in names {
            pm.add(self.create(n.as_ref())?);
        }
        Ok(pm)
    }
}

impl Registry<lathe_ir::GenericOp> {
    /// The standard passes and the generic-IR optimisations run before
    /// instruction selection: `fold`, `simplify`, `gvn`, `load-cse`,
    /// `unroll`, `promote-arrays`, `ubo-vectors` and `optimise` (the first
    /// five, `merge-blocks` and `dce` to a fixed point).
    pub fn generic() -> Self {
        let mut r = Self::standard();
        r.register(
            "fold",
            "fold pure operations on constants, and branches on constants",
            || Box::new(crate::fold::Fold),
        );
        r.register(
            "simplify",
            "algebraic identities (float ones unless the shader preserves specials)",
            || Box::new(crate::simplify::Simplify),
        );
        r.register(
            "gvn",
            "replace an instruction by an identical dominating one",
            || Box::new(crate::gvn::Gvn),
        );
        r.register(
            "load-cse",
            "replace a load by an earlier identical one in its block with no conflicting write between",
            || Box::new(crate::load_cse::LoadCse),
        );
        r.register(
            "unroll",
            "unroll counted loops whose trip count the interpreter's ops compute",
            || Box::new(crate::unroll::Unroll),
        );
        r.register(
            "promote-arrays",
            "private arrays become values (chains of sel for run-time indices)",
            || Box::new(crate::promote_arrays::PromoteArrays),
        );
        r.register(
            "ubo-vectors",
            "UBO loads at 16-byte-aligned offsets become loads of one word of a vector",
            || Box::new(crate::ubo_vectors::UboVectors),
        );
        r.register(
            "optimise",
            "fold, simplify, gvn, load-cse, merge-blocks, unroll and dce to a fixed point",
            || Box::new(crate::optimise::Optimise),
        );
        r
    }
}

/// What one pass did in a pipeline run.
#[derive(Debug, Clone)]
pub struct PassRecord {
    pub name: &'static str,
    pub changed: bool,
    pub time: Duration,
    /// The shader printed after the pass, when `print_after_all` is set.
    pub dump: Option<String>,
}

/// Runs passes in order.
pub struct PassManager<O> {
    passes: Vec<Box<dyn Pass<O>>>,
    /// Validate the input and the result of every pass. On by default in
    /// debug builds (and so in tests).
    pub verify: bool,
    /// Keep a dump of the shader after every pass.
    pub print_after_all: bool,
}

impl<O: Opcode> Default for PassManager<O> {
    fn default() -> Self {
        Self::new()
    }
}

impl<O: Opcode> PassManager<O> {
    pub fn new() -> Self {
        PassManager {
            passes: Vec::new(),
            verify: cfg!(debug_assertions),
            print_after_all: false,
        }
    }

    pub fn add(&mut self, pass: Box<dyn Pass<O>>) {
        self.passes.push(pass);
    }

    pub fn pass_names(&self) -> Vec<&'static str> {
        self.passes.iter().map(|p| p.name()).collect()
    }

    /// Run every pass once, in order.
    pub fn run(&mut self, shader: &mut Shader<'_, O>) -> Result<Vec<PassRecord>, PassError> {
        if self.verify {
            lathe_ir::validate(shader).map_err(PassError::InvalidInput)?;
        }
        let mut records = Vec::with_capacity(self.passes.len());
        for pass in &mut self.passes {
            let start = Instant::now();
            let changed = pass.run(shader).map_err(|error| PassError::Failed {
                pass: pass.name(),
                error,
            })?;
            let time = start.elapsed();
            if self.verify {
                if let Err(error) = lathe_ir::validate(shader) {
                    return Err(PassError::InvalidOutput {
                        pass: pass.name(),
                        error,
                        dump: lathe_ir::print(shader),
                    });
                }
            }
            records.push(PassRecord {
                name: pass.name(),
                changed,
                time,
                dump: self.print_after_all.then(|| lathe_ir::print(shader)),
            });
        }
        Ok(records)
    }
}

/// A per-pass timing table (for `--time-passes`).
pub fn timing_report(records: &[PassRecord]) -> String {
    let total: Duration = records.iter().map(|r| r.time).sum();
    let mut out = String::from("pass          time (us)  changed\n");
    for r in records {
        out.push_str(&format!(
            "{:<12} {:>10.1}  {}\n",
            r.name,
            r.time.as_secs_f64() * 1e6,
            if r.changed { "yes" } else { "no" }
        ));
    }
    out.push_str(&format!(
        "{:<12} {:>10.1}\n",
        "total",
        total.as_secs_f64() * 1e6
    ));
    out
}
