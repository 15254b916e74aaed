//! Which outputs `lathe_ir::verify` compares within tolerance: those a
//! `fdiv` (or another approximate operation) reaches, through arrays too.

use lathe_ir::verify::{self, ExecError, Executor, Options, VerifyError};
use lathe_ir::{GenericOp, Invocation, Memory, Outcome};

/// Runs the interpreter and moves every f32 output one ulp up, as a
/// division by reciprocal and multiply may.
struct OneUlpOff<'s, 'a>(&'s lathe_ir::Shader<'a, GenericOp>);

impl Executor for OneUlpOff<'_, '_> {
    fn execute(
        &self,
        threads: &[Invocation],
        memory: &mut Memory,
    ) -> Result<Vec<Outcome>, ExecError> {
        let mut out = Vec::new();
        for inv in threads {
            let mut o = lathe_ir::interp::run_with_memory(self.0, inv, memory, Default::default())
                .map_err(|e| ExecError::Failed(e.to_string()))?;
            for (_, bits) in o.outputs.values_mut() {
                *bits += 1;
            }
            out.push(o);
        }
        Ok(out)
    }
}

/// A vertex shader storing `x op 48.0` into an array and outputting the
/// element back.
fn through_array(op: &str) -> String {
    format!(
        "shader vertex
array a0: f32[2]
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = const 48.0
  %2:f32 = {op} %0, %1
  array_store array=a0 offset=0 %2
  array_store array=a0 offset=1 %1
  %3:f32 = array_load array=a0 offset=0
  %4:f32 = array_load array=a0 offset=1
  %5:f32 = fadd %3, %1
  store_output slot=0 comp=0 %5
  store_output slot=0 comp=1 %4
  ret
"
    )
}

fn check(text: &str) -> Result<verify::Report, VerifyError> {
    let arena = lathe_ir::Bump::new();
    let shader = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
    verify::verify(&shader, &OneUlpOff(&shader), &Options::default())
}

#[test]
fn a_quotient_stored_in_an_array_and_loaded_back_is_approximate() {
    // comp 0 is approximate (1 ulp passes), comp 1 is exact: the array's
    // other element is a constant, and exactness is element by element.
    let err = check(&through_array("fdiv")).unwrap_err();
    assert!(
        matches!(
            &err,
            VerifyError::Mismatch {
                approximate: false,
                what,
                ..
            } if what == "output slot 0 comp 1"
        ),
        "{err}"
    );
    // A product is exact: one ulp is a mismatch.
    let err = check(&through_array("fmul")).unwrap_err();
    assert!(
        matches!(
            err,
            VerifyError::Mismatch {
                approximate: false,
                ..
            }
        ),
        "{err}"
    );
}
