//! The selection oracle (`lathe_mali::valhall::oracle::SELECTIONS`): each
//! machine instruction equals the IR interpreter's semantics of its
//! generic operation on random operands (`lathe_ir::selection_oracle`).

use lathe_ir::selection_oracle::{check, is_half};
use lathe_mali::valhall::oracle::SELECTIONS;
use lathe_mali::valhall::{Arch, assemble_source, sim};

const G: Arch = Arch::V10;

#[test]
fn every_selection_equals_the_ir_semantics_of_its_operation() {
    let report = check(SELECTIONS, |&s| {
        let program = assemble_source(s.asm, G).map_err(|e| format!("{e:?}"))?;
        Ok(move |vals: &[u32]| {
            let mut m = sim::machine(4);
            // Operand i lives in r(i+1), the result in r0 (see the
            // oracle's module doc).
            for (i, v) in vals.iter().enumerate() {
                let (f, h, idx) = m.parse_reg(&format!("r{}", i + 1)).unwrap();
                for lane in 0..4 {
                    m.set(f, h, idx, lane, *v);
                }
            }
            sim::run(&mut m, &program, G).map_err(|e| e.to_string())?;
            let (f, h, idx) = m.parse_reg("r0").unwrap();
            let got = m.get(f, h, idx, 0).unwrap();
            // A 16-bit result is the low half.
            Ok(if is_half(s.result) { got & 0xffff } else { got })
        })
    })
    .unwrap_or_else(|e| panic!("{e}"));
    println!("{report}");
}
