//! The order of atomics an executor fixes (`lathe_ir::atomic_order`):
//! checked for legality, then followed by the interpreter, so a shader
//! that branches on an `atomicAdd` result (a linked-list node allocator)
//! verifies exactly.

use lathe_ir::atomic_order::{AtomicEvent, AtomicOrder};
use lathe_ir::verify::{self, ExecError, Executor, Options, VerifyError};
use lathe_ir::{GenericOp, Invocation, Memory, Outcome, Type};

/// Each invocation takes a node index from the counter in word 0 and,
/// when it is below 64, stores its input at word `2 + index` and
/// outputs the index; otherwise it outputs 64.
const ALLOCATE: &str = "shader fragment
b0:
  %0:u32 = const 0
  %1:u32 = const 1
  %2:u32 = const 64
  %3:u32 = const 4
  %4:u32 = const 8
  %5:u32 = ssbo_atomic binding=0 op=add %0, %1
  %6:bool = ult %5, %2
  branch %6, b1, b2
b1:
  %7:u32 = imul %5, %3
  %8:u32 = iadd %7, %4
  %9:u32 = load_input slot=0 comp=0 interp=flat
  store_ssbo binding=0 %8, %9
  jump b2
b2:
  %10:u32 = phi [%5, b1], [%2, b0]
  store_output slot=0 comp=0 %10
  ret
";

/// What [`ALLOCATE`] does, written out, with the invocations' atomics in
/// a chosen order; `add` is what its atomic adds (1 is right).
struct Allocator {
    order: [usize; 4],
    add: u32,
    /// Log a lost update: the last atomic returns what the first did.
    lose_update: bool,
}

impl Executor for Allocator {
    fn execute(
        &self,
        threads: &[Invocation],
        memory: &mut Memory,
    ) -> Result<Vec<Outcome>, ExecError> {
        let mut out = vec![Outcome::default(); threads.len()];
        for (n, &t) in self.order.iter().enumerate() {
            let words = &mut memory.ssbos[0];
            let old = if self.lose_update && n == 3 {
                memory.atomic_log[0].old
            } else {
                words[0]
            };
            let new = old.wrapping_add(self.add);
            words[0] = new;
            memory.atomic_log.push(AtomicEvent {
                thread: t as u32,
                binding: 0,
                word: 0,
                old,
                new,
            });
            let index = if old < 64 {
                words[2 + old as usize] = threads[t].inputs[&(0, 0)];
                old
            } else {
                64
            };
            out[t].outputs.insert((0, 0), (Type::U32, index));
        }
        Ok(out)
    }
}

fn check(executor: &Allocator) -> Result<verify::Report, VerifyError> {
    let arena = lathe_ir::Bump::new();
    let shader = lathe_ir::parse::<GenericOp>(&arena, ALLOCATE).unwrap();
    verify::verify(&shader, executor, &Options::default())
}

#[test]
fn the_interpreter_follows_a_legal_order_and_compares_exactly() {
    for order in [[0, 1, 2, 3], [3, 1, 0, 2]] {
        let report = check(&Allocator {
            order,
            add: 1,
            lose_update: false,
        })
        .unwrap();
        assert_eq!(report.undefined, 0, "{order:?}");
        // Four outputs and the buffer's words.
        assert_eq!(report.compared, 4 + 1024, "{order:?}");
    }
}

#[test]
fn an_illegal_order_or_a_different_operation_fails() {
    let err = check(&Allocator {
        order: [2, 0, 3, 1],
        add: 1,
        lose_update: true,
    })
    .unwrap_err();
    assert!(
        matches!(&err, VerifyError::AtomicOrder(m) if m.contains("returned")),
        "{err}"
    );
    let err = check(&Allocator {
        order: [0, 1, 2, 3],
        add: 2,
        lose_update: false,
    })
    .unwrap_err();
    assert!(
        matches!(&err, VerifyError::AtomicOrder(m) if m.contains("the compiled program left")),
        "{err}"
    );
}

#[test]
fn an_order_is_checked_against_the_initial_memory() {
    let event = |thread, old, new| AtomicEvent {
        thread,
        binding: 0,
        word: 1,
        old,
        new,
    };
    let ssbos = vec![vec![0, 10]];
    let order = AtomicOrder::new(&[event(1, 10, 11), event(0, 11, 13)], &ssbos).unwrap();
    assert_eq!(order.finals().collect::<Vec<_>>(), [((0, 1), 13)]);
    // Not consumed: the interpreter performed fewer atomics.
    assert!(order.finish().is_err());
    assert!(AtomicOrder::new(&[event(1, 9, 10)], &ssbos).is_err());
    assert!(AtomicOrder::new(&[event(1, 10, 11), event(0, 10, 11)], &ssbos).is_err());
}
