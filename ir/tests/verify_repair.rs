//! Input repair by provenance: a draw whose run reads out of bounds with
//! an index computed from random input words has those words re-rolled
//! towards small values and is run again (`lathe_ir::verify::Repair`).

use lathe_ir::interp::{self, InterpError, Limits, Source};
use lathe_ir::verify::{self, ExecError, Executor, Options};
use lathe_ir::{GenericOp, Invocation, Memory, Outcome};

/// An "executor" that runs the interpreter itself.
struct Same<'s, 'a>(&'s lathe_ir::Shader<'a, GenericOp>);

impl Executor for Same<'_, '_> {
    fn execute(
        &self,
        threads: &[Invocation],
        memory: &mut Memory,
    ) -> Result<Vec<Outcome>, ExecError> {
        let quad: &[Invocation; 4] = threads.try_into().unwrap();
        interp::run_quad(self.0, quad, memory, Limits::default())
            .map(Vec::from)
            .map_err(|e| ExecError::Failed(e.to_string()))
    }
}

/// A linked-list walk: the head index is `uniform 0 * uniform 1 + ubo
/// word 2`, each next index the storage word at the current one, 12
/// hops. Random words are out of bounds half the time, so a random draw
/// almost never walks all 12 hops inside the 1024-word buffer.
const WALK: &str = "shader fragment
b0:
  %0:u32 = load_uniform index=0
  %1:u32 = load_uniform index=1
  %2:u32 = imul %0, %1
  %3:u32 = const 8
  %4:u32 = load_ubo binding=0 %3
  %5:u32 = iadd %2, %4
  %6:u32 = const 0
  %7:u32 = const 1
  %8:u32 = const 12
  %9:u32 = const 4
  jump b1
b1:
  %10:u32 = phi [%5, b0], [%13, b1]
  %11:u32 = phi [%6, b0], [%14, b1]
  %12:u32 = imul %10, %9
  %13:u32 = load_ssbo binding=0 %12
  %14:u32 = iadd %11, %7
  %15:bool = ilt %14, %8
  branch %15, b1, b2
b2:
  store_output slot=0 comp=0 %13
  ret
";

#[test]
fn an_out_of_bounds_access_names_the_words_its_address_came_from() {
    let arena = lathe_ir::Bump::new();
    let shader = lathe_ir::parse::<GenericOp>(&arena, WALK).unwrap();
    let mut inv = Invocation {
        uniforms: vec![3, 5],
        ubos: vec![vec![0, 0, 2000]],
        ..Invocation::default()
    };
    let mut memory = Memory {
        ssbos: vec![vec![0; 1024]],
        ..Memory::default()
    };
    let traced = Limits {
        sources: true,
        ..Limits::default()
    };
    // Head 3 * 5 + 2000 = 2015 is past the 1024 words.
    let err = interp::run_with_memory(&shader, &inv, &mut memory.clone(), traced).unwrap_err();
    let InterpError::Undefined { sources, .. } = err else {
        panic!("{err}")
    };
    let want = [
        Source::Uniform { word: 0 },
        Source::Uniform { word: 1 },
        Source::Ubo {
            binding: 0,
            word: 2,
        },
    ];
    assert_eq!(sources, want);
    // Untraced, the same error names nothing.
    let err =
        interp::run_with_memory(&shader, &inv, &mut memory.clone(), Limits::default()).unwrap_err();
    assert!(matches!(err, InterpError::Undefined { sources, .. } if sources.is_empty()));
    // A hop through storage word 7 whose value is out of bounds: that word
    // joins the list (it is an input), the earlier ones stay (the address
    // was computed from them too).
    inv.ubos[0][2] = 7u32.wrapping_sub(15);
    memory.ssbos[0][7] = 5000;
    let err = interp::run_with_memory(&shader, &inv, &mut memory, traced).unwrap_err();
    let InterpError::Undefined { sources, .. } = err else {
        panic!("{err}")
    };
    assert!(sources.contains(&Source::Ssbo {
        binding: 0,
        word: 7
    }));
    assert!(sources.contains(&Source::Uniform { word: 0 }));
}

#[test]
fn a_walk_through_random_indices_verifies_after_repair() {
    let arena = lathe_ir::Bump::new();
    let shader = lathe_ir::parse::<GenericOp>(&arena, WALK).unwrap();
    let report = verify::verify(&shader, &Same(&shader), &Options::default()).unwrap();
    assert!(report.repaired > 0, "{report:?}");
    // The four outputs and the buffer's words.
    assert_eq!((report.threads, report.compared), (4, 4 + 1024));
}
