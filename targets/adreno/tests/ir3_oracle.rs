//! The selection oracle (`lathe_adreno::ir3::oracle::SELECTIONS`): each
//! machine instruction equals the IR interpreter's semantics of its
//! generic operation on random operands (`lathe_ir::selection_oracle`).

use lathe_adreno::ir3::oracle::SELECTIONS;
use lathe_adreno::ir3::{Generation, assemble_source, sim};
use lathe_ir::selection_oracle::{check, is_half};

const G: Generation = Generation::A6xx;

/// Where operand `i` of a type lives (see the oracle's module doc).
fn operand_reg(i: usize, ty: &str) -> String {
    let c = ["x", "y", "z"][i];
    if is_half(ty) {
        format!("hr2.{c}")
    } else {
        format!("r1.{c}")
    }
}

#[test]
fn every_selection_equals_the_ir_semantics_of_its_operation() {
    let report = check(SELECTIONS, |&s| {
        let program = assemble_source(s.asm, G).map_err(|e| format!("{e:?}"))?;
        Ok(move |vals: &[u32]| {
            let mut m = sim::machine(4);
            for (i, (v, ty)) in vals.iter().zip(s.operands).enumerate() {
                let (f, h, idx) = m.parse_reg(&operand_reg(i, ty)).unwrap();
                for lane in 0..4 {
                    m.set(f, h, idx, lane, *v);
                }
            }
            sim::run(&mut m, &program, G).map_err(|e| e.to_string())?;
            let dst = if is_half(s.result) { "hr0.x" } else { "r0.x" };
            let (f, h, idx) = m.parse_reg(dst).unwrap();
            Ok(m.get(f, h, idx, 0).unwrap())
        })
    })
    .unwrap_or_else(|e| panic!("{e}"));
    println!("{report}");
}
