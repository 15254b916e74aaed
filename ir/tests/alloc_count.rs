//! Building a shader makes no per-instruction global-heap allocation: with
//! a pre-sized arena, the only allocations are the arena's own chunks, and
//! their number does not grow with the instruction count.

use lathe_ir::{Builder, GenericOp, Interp, Shader, Stage, Type};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    // Per thread: tests run in parallel and must not see each other.
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCS: Cell<usize> = const { Cell::new(0) };
}

fn counting() -> bool {
    COUNTING.try_with(Cell::get).unwrap_or(false)
}

// SAFETY: forwards every call unchanged to the system allocator; the
// counters are thread-local cells and do not touch the memory.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if counting() {
            let _ = ALLOCS.try_with(|n| n.set(n.get() + 1));
        }
        // SAFETY: same contract as our caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as our caller's.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if counting() {
            let _ = ALLOCS.try_with(|n| n.set(n.get() + 1));
        }
        // SAFETY: same contract as our caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Build `n` groups of arithmetic, diamonds with phis and a loop header,
/// returning (global allocations during the build, arena chunk count).
fn build(groups: usize, presized: bool) -> (usize, usize, usize) {
    // Room for everything up front (tables with their headroom for
    // inserted instructions, operand lists, block lists), or an arena that
    // grows chunk by chunk.
    let mut arena = if presized {
        lathe_ir::Bump::with_capacity(groups * 3072 + (1 << 16))
    } else {
        lathe_ir::Bump::new()
    };
    let chunks_before = arena.iter_allocated_chunks().count();
    ALLOCS.with(|n| n.set(0));
    COUNTING.with(|c| c.set(true));
    let len = {
        let (insts, blocks) = if presized {
            (groups * 16, groups * 4)
        } else {
            (0, 0)
        };
        let mut shader: Shader<GenericOp> =
            Shader::with_capacity(&arena, Stage::Fragment, insts, blocks);
        let mut b = Builder::new(&mut shader);
        let x = b.load_input(0, 0, Interp::SMOOTH, Type::F32);
        let mut acc = x;
        for _ in 0..groups {
            let c = b.const_f32(0.5);
            let m = b.fmul(acc, c);
            let copy = b.mov(m);
            let cond = b.flt(copy, x);
            let [joined] = b.if_else(cond, |b| [b.fadd(copy, c)], |b| [b.fsub(copy, c)]);
            let parts = b.collect(&[joined, copy]);
            acc = b.split(parts, 0);
        }
        b.store_output(0, 0, acc);
        b.ret();
        shader.len()
    };
    COUNTING.with(|c| c.set(false));
    let allocs = ALLOCS.with(Cell::get);
    let chunks = arena.iter_allocated_chunks().count() - chunks_before;
    (allocs, chunks, len)
}

#[test]
fn building_does_no_per_instruction_heap_allocation() {
    let (small_allocs, small_chunks, small_len) = build(10, true);
    let (big_allocs, big_chunks, big_len) = build(2000, true);
    eprintln!(
        "presized: {small_len} insts -> {small_allocs} allocations; {big_len} insts -> {big_allocs}"
    );
    assert!(big_len > 100 * small_len / 2, "{small_len} vs {big_len}");
    // Every global allocation is an arena chunk, and a pre-sized arena needs
    // no new chunk at all.
    assert!(
        small_allocs <= small_chunks,
        "{small_allocs} allocations, {small_chunks} chunks"
    );
    assert!(
        big_allocs <= big_chunks,
        "{big_allocs} allocations, {big_chunks} chunks"
    );
    assert_eq!(
        big_allocs, small_allocs,
        "allocations grew with the instruction count"
    );
}

#[test]
fn a_growing_arena_allocates_only_a_logarithmic_number_of_chunks() {
    let (allocs, chunks, len) = build(2000, false);
    eprintln!("growing arena: {len} insts -> {allocs} allocations, {chunks} chunks");
    assert!(allocs <= chunks, "{allocs} allocations but {chunks} chunks");
    assert!(chunks <= 32, "{chunks} chunks for {len} instructions");
}
