//! Disassembly into a caller's reused buffer, and assembly, make no heap
//! allocation per instruction: counted with a global allocator over every
//! vector word and line.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use lathe_adreno::ir3::{Generation, assemble, disassemble_into};

/// Forwards to the system allocator and counts allocations.
struct Counting;

thread_local! {
    /// Allocations made by this thread: the tests run in parallel, and
    /// one test's set-up must not count in the other's measurement.
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn allocations() -> usize {
    ALLOCATIONS.with(Cell::get)
}

fn count() {
    ALLOCATIONS.with(|c| c.set(c.get() + 1));
}

// SAFETY: every method forwards unchanged to `System`, which upholds the
// `GlobalAlloc` contract; the counter is a const-initialised thread-local
// cell, which does not allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const VECTORS: &str = include_str!("ir3-data/ir3-disasm.tsv");

#[test]
fn disassembling_into_a_reused_buffer_does_not_allocate() {
    let words: Vec<(u64, Generation)> = VECTORS
        .lines()
        .skip(1)
        .filter_map(|line| {
            let cols: Vec<&str> = line.split('\t').collect();
            let generation = match cols[2] {
                "400" => Generation::A4xx,
                "500" => Generation::A5xx,
                "600" => Generation::A6xx,
                "700" => Generation::A7xx,
                _ => return None,
            };
            Some((u64::from_str_radix(cols[3], 16).ok()?, generation))
        })
        .collect();
    assert!(words.len() > 200);
    let mut out = String::with_capacity(4096);
    // Warm-up: the embedded spec is parsed once, on first use.
    let mut decoded = 0;
    for &(word, generation) in &words {
        out.clear();
        if disassemble_into(word, generation, &mut out).is_ok() {
            decoded += 1;
        }
    }
    assert!(decoded > 200);
    let before = allocations();
    for &(word, generation) in &words {
        out.clear();
        let _ = disassemble_into(word, generation, &mut out);
    }
    let after = allocations();
    assert_eq!(
        after - before,
        0,
        "allocations while disassembling {} words",
        words.len()
    );
}

#[test]
fn assembling_a_line_does_not_allocate() {
    let lines: Vec<(&str, Generation)> = VECTORS
        .lines()
        .skip(1)
        .filter_map(|line| {
            let cols: Vec<&str> = line.split('\t').collect();
            let generation = Generation::from_gpu_id(cols.get(2)?.parse().ok()?)?;
            Some((*cols.get(4)?, generation))
        })
        .collect();
    assert!(lines.len() > 200);
    // Warm-up: the per-thread confirmation buffer grows once.
    let assembled = lines
        .iter()
        .filter(|(text, g)| assemble(text, *g).is_ok())
        .count();
    assert_eq!(assembled, lines.len());
    let before = allocations();
    for (text, g) in &lines {
        let _ = assemble(text, *g);
    }
    let after = allocations();
    assert_eq!(
        after - before,
        0,
        "allocations while assembling {} lines",
        lines.len()
    );
}
