//! Array layers rounded before sampling (generic IR, before selection).
//!
//! A sample or gather of an arrayed texture takes its layer as a float,
//! which Vulkan rounds to the nearest integer (ties to even, the rule the
//! interpreter follows). The ir3 texture unit takes an integral layer (see
//! the cat5 notes in `isa/specs/adreno/semantics.isa`: it truncates, Mesa
//! adds 0.5 first), so [`round_layers`] rewrites the coordinate operand
//! into a `collect` whose last lane is `round_even(layer)`: exact whatever
//! the hardware does with a fraction, and one instruction, as Mesa's add.
//!
//! ```
//! use lathe_adreno::ir3::layers::round_layers;
//!
//! let text = "shader fragment\nb0:\n  %0:f32 = load_uniform index=0\n  %1:f32x3 = collect %0, %0, %0\n  %2:f32x4 = sample texture=0 sampler=0 array %1\n  %3:f32 = split lane=0 %2\n  store_output slot=0 comp=0 %3\n  ret\n";
//! let arena = lathe_ir::Bump::new();
//! let mut shader = lathe_ir::parse::<lathe_ir::GenericOp>(&arena, text).unwrap();
//! round_layers(&mut shader);
//! let out = lathe_ir::print(&shader);
//! let round = out.lines().find(|l| l.contains("= round_even %0")).expect(&out);
//! let layer = round.trim().split(':').next().unwrap();
//! assert!(out.contains(&format!("= collect %0, %0, {layer}\n")), "{out}");
//! ```

use lathe_ir::{GenericOp, Inst, Op, Shader, Type, Value};

/// Rounds the layer coordinate of every arrayed `sample` and `gather`.
pub fn round_layers(shader: &mut Shader<'_, GenericOp>) {
    for b in shader.layout().to_vec() {
        let old = shader.block_insts(b).to_vec();
        let mut insts = Vec::with_capacity(old.len());
        for i in old {
            let arrayed = match shader.inst(i).op {
                Op::Opcode(GenericOp::Sample { shape, .. } | GenericOp::Gather { shape, .. }) => {
                    shape.array
                }
                _ => false,
            };
            if arrayed {
                round_layer(shader, i, &mut insts);
            }
            insts.push(i);
        }
        shader.set_block_insts(b, &insts);
    }
}

/// Gives `i` a new coordinate collect (instructions pushed to `insts`).
fn round_layer(shader: &mut Shader<'_, GenericOp>, i: Inst, insts: &mut Vec<Inst>) {
    let coord = shader.inst(i).args[0];
    let ty = shader.value_type(coord);
    let scalar = Type::scalar(ty.scalar);
    let def = shader.value_def(coord);
    let mut lanes: Vec<Value> = if shader.inst(def).op == Op::Collect {
        shader.inst(def).args.to_vec()
    } else {
        (0..ty.lanes)
            .map(|lane| {
                let s = shader.create_inst(Op::Split { lane }, &[coord], &[], None, Some(scalar));
                insts.push(s);
                shader.inst(s).result.expect("a split has a result")
            })
            .collect()
    };
    let Some(layer) = lanes.pop() else {
        return;
    };
    let r = shader.create_inst(
        Op::Opcode(GenericOp::RoundEven),
        &[layer],
        &[],
        None,
        Some(scalar),
    );
    insts.push(r);
    lanes.push(shader.inst(r).result.expect("round_even has a result"));
    let c = shader.create_inst(Op::Collect, &lanes, &[], None, Some(ty));
    insts.push(c);
    let mut args = shader.inst(i).args.to_vec();
    args[0] = shader.inst(c).result.expect("a collect has a result");
    shader.set_args(i, &args);
}
