//! The `lathe` process's global allocator: one bump arena, then the system's.
//!
//! A `lathe compile` process lives a few milliseconds and allocates under a
//! megabyte in a few thousand blocks. glibc's malloc and free were 12-16% of
//! such a process's instructions, and each 4 KiB page of heap it touched cost
//! a page fault (about 2 us each in a VM; 130-160 of them). Here a block is
//! a bump of one atomic pointer through a region reserved once and marked
//! for transparent huge pages, so a typical compile's heap is one fault
//! (the kernel zeroing 2 MiB, about 0.15 ms: why `main` turns the arena on
//! only after the command line is parsed, so `--help` and `--version` don't
//! pay it).
//!
//! Memory goes back to the arena only when the newest block is freed (or
//! resized, which then happens in place); any other freed block stays
//! unused until the process exits. When the arena is full, off, or could
//! not be reserved, blocks come from the system allocator, so a long `lathe
//! stats` run only stops reusing memory for its first `capacity` bytes.
//! Blocks are told apart by address, so either kind may be freed at any time
//! and from any thread.
//!
//! Only the binary uses it (`#[global_allocator]` in `main.rs`): the
//! library, its tests and anything that embeds it keep their own allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::ptr;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

/// A bump allocator over one lazily reserved region, falling back to
/// [`System`].
pub struct Arena {
    capacity: usize,
    /// `OFF`, `RESERVING` or `READY`.
    state: AtomicU8,
    /// The region, `start..end`; both zero until reserved.
    start: AtomicUsize,
    end: AtomicUsize,
    /// The first free byte.
    next: AtomicUsize,
    /// Everything at or above this address is untouched since the kernel
    /// zeroed it; below it, freed blocks may have left data.
    clean: AtomicUsize,
}

const OFF: u8 = 0;
const RESERVING: u8 = 1;
const READY: u8 = 2;

/// The transparent huge page size on the architectures the arena is used on.
const HUGE_PAGE: usize = 2 << 20;

impl Arena {
    /// An arena of `capacity` bytes, off (every block from the system
    /// allocator) until [`Arena::enable`].
    pub const fn new(capacity: usize) -> Self {
        Arena {
            capacity,
            state: AtomicU8::new(OFF),
            start: AtomicUsize::new(0),
            end: AtomicUsize::new(0),
            next: AtomicUsize::new(0),
            clean: AtomicUsize::new(0),
        }
    }

    /// Whether `ptr` came from the arena (rather than the system allocator).
    fn owns(&self, ptr: *mut u8) -> bool {
        let addr = ptr as usize;
        // `end` is published after `start` (release), so a non-zero `end`
        // read with acquire comes with the right `start`.
        let end = self.end.load(Ordering::Acquire);
        addr < end && addr >= self.start.load(Ordering::Relaxed)
    }

    /// Reserves the region: blocks come from it from now on. Once only; a
    /// second call changes nothing.
    pub fn enable(&self) {
        if self
            .state
            .compare_exchange(OFF, RESERVING, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return;
        }
        if let Some(start) = reserve(self.capacity) {
            self.next.store(start, Ordering::Relaxed);
            self.clean.store(start, Ordering::Relaxed);
            self.start.store(start, Ordering::Relaxed);
            self.end.store(start + self.capacity, Ordering::Release);
        }
        // A failed reservation leaves an empty region: every block then
        // comes from the system allocator.
        self.state.store(READY, Ordering::Release);
    }

    /// A block from the arena, or `None` if it has no room.
    fn bump(&self, layout: Layout) -> Option<*mut u8> {
        if self.state.load(Ordering::Acquire) != READY {
            return None;
        }
        let end = self.end.load(Ordering::Acquire);
        let mut current = self.next.load(Ordering::Relaxed);
        loop {
            let block = current.checked_add(layout.align() - 1)? & !(layout.align() - 1);
            let block_end = block.checked_add(layout.size())?;
            if block_end > end {
                return None;
            }
            match self.next.compare_exchange_weak(
                current,
                block_end,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Some(block as *mut u8),
                Err(now) => current = now,
            }
        }
    }

    /// Makes the arena's block `block..block + size` zero: only the part
    /// below `clean` can hold old data.
    ///
    /// # Safety
    /// The block must be one the arena just handed out.
    unsafe fn zero(&self, block: *mut u8, size: usize) {
        let addr = block as usize;
        let clean = self.clean.load(Ordering::Acquire);
        if addr < clean {
            // SAFETY: the caller owns the block's `size` bytes.
            unsafe { ptr::write_bytes(block, 0, size.min(clean - addr)) };
        }
    }

    /// Moves the first free byte back from `from` to `to` if nobody has
    /// moved it since. What lies between may have been written, so `clean`
    /// covers it first: only memory that comes back to the arena can be
    /// handed out twice.
    fn give_back(&self, from: usize, to: usize) -> bool {
        if self.next.load(Ordering::Relaxed) != from {
            return false;
        }
        self.clean.fetch_max(from, Ordering::AcqRel);
        self.next
            .compare_exchange(from, to, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
    }

    /// Moves the first free byte forward from `from` to `to` if nobody has
    /// moved it since.
    fn extend(&self, from: usize, to: usize) -> bool {
        self.next
            .compare_exchange(from, to, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
    }
}

// SAFETY: arena blocks are disjoint ranges of a region that lives as long as
// the process, aligned as asked; the rest is the system allocator's.
unsafe impl GlobalAlloc for Arena {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match self.bump(layout) {
            Some(block) => block,
            // SAFETY: the caller's layout is valid and non-zero in size.
            None => unsafe { System.alloc(layout) },
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match self.bump(layout) {
            Some(block) => {
                // SAFETY: the block was just handed out.
                unsafe { self.zero(block, layout.size()) };
                block
            }
            // SAFETY: as in `alloc`.
            None => unsafe { System.alloc_zeroed(layout) },
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if self.owns(ptr) {
            // The newest block gives its room back; any other is left alone.
            let block = ptr as usize;
            self.give_back(block + layout.size(), block);
        } else {
            // SAFETY: not the arena's, so the system allocator's, with this layout.
            unsafe { System.dealloc(ptr, layout) }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if !self.owns(ptr) {
            // SAFETY: the system allocator's block, as the caller describes it.
            return unsafe { System.realloc(ptr, layout, new_size) };
        }
        let block = ptr as usize;
        let old_end = block + layout.size();
        // The newest block grows or shrinks where it is.
        if let Some(new_end) = block.checked_add(new_size)
            && new_end <= self.end.load(Ordering::Acquire)
        {
            let in_place = if new_end < old_end {
                self.give_back(old_end, new_end)
            } else {
                self.extend(old_end, new_end)
            };
            if in_place {
                return ptr;
            }
        }
        if new_size <= layout.size() {
            return ptr;
        }
        // SAFETY: `new_size` is non-zero and, as the caller guarantees, does
        // not overflow `isize` when rounded up to the alignment.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        // SAFETY: as in `alloc`.
        let moved = unsafe { self.alloc(new_layout) };
        if !moved.is_null() {
            // SAFETY: both blocks are live, distinct and at least
            // `layout.size()` long.
            unsafe {
                ptr::copy_nonoverlapping(ptr, moved, layout.size());
                self.dealloc(ptr, layout);
            }
        }
        moved
    }
}

/// Reserves `capacity` bytes of address space aligned to a huge page and asks
/// for huge pages in it; `None` if the system refuses.
#[cfg(target_os = "linux")]
fn reserve(capacity: usize) -> Option<usize> {
    let size = capacity.checked_add(HUGE_PAGE)?;
    // SAFETY: a fresh anonymous private mapping; no existing memory is touched.
    let base = unsafe {
        libc::mmap(
            ptr::null_mut(),
            size,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if base == libc::MAP_FAILED {
        return None;
    }
    let start = (base as usize).next_multiple_of(HUGE_PAGE);
    // Only a hint: without transparent huge pages the region still works,
    // a 4 KiB page at a time.
    // SAFETY: `start..start + capacity` lies inside the new mapping.
    unsafe { libc::madvise(start as *mut libc::c_void, capacity, libc::MADV_HUGEPAGE) };
    Some(start)
}

/// Elsewhere every block comes from the system allocator.
#[cfg(not(target_os = "linux"))]
fn reserve(_capacity: usize) -> Option<usize> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enabled(capacity: usize) -> Arena {
        let arena = Arena::new(capacity);
        arena.enable();
        arena
    }

    fn layout(size: usize, align: usize) -> Layout {
        Layout::from_size_align(size, align).unwrap()
    }

    #[test]
    fn blocks_are_aligned_disjoint_and_from_the_arena() {
        let arena = enabled(1 << 20);
        let mut blocks = Vec::new();
        for (i, align) in [1, 8, 64, 4096, 2, 16].into_iter().enumerate() {
            let size = 3 + 7 * i;
            let block = unsafe { arena.alloc(layout(size, align)) };
            assert!(arena.owns(block));
            assert_eq!(block as usize % align, 0);
            unsafe { ptr::write_bytes(block, i as u8 + 1, size) };
            blocks.push((block, size, i as u8 + 1));
        }
        for (block, size, fill) in blocks {
            let bytes = unsafe { std::slice::from_raw_parts(block, size) };
            assert!(bytes.iter().all(|&b| b == fill), "blocks overlap");
        }
    }

    #[test]
    fn the_newest_block_is_reused_and_resized_in_place() {
        let arena = enabled(1 << 20);
        let a = unsafe { arena.alloc(layout(100, 8)) };
        let b = unsafe { arena.alloc(layout(100, 8)) };
        unsafe { arena.dealloc(b, layout(100, 8)) };
        let c = unsafe { arena.alloc(layout(50, 8)) };
        assert_eq!(b, c, "freeing the newest block gives its room back");
        let grown = unsafe { arena.realloc(c, layout(50, 8), 5000) };
        assert_eq!(grown, c, "the newest block grows in place");
        // An older block moves, keeping its contents.
        unsafe { ptr::write_bytes(a, 7, 100) };
        let moved = unsafe { arena.realloc(a, layout(100, 8), 200) };
        assert_ne!(moved, a);
        let bytes = unsafe { std::slice::from_raw_parts(moved, 100) };
        assert!(bytes.iter().all(|&b| b == 7));
    }

    #[test]
    fn zeroed_blocks_are_zero_even_where_a_freed_block_was() {
        let arena = enabled(1 << 20);
        let a = unsafe { arena.alloc(layout(4096, 8)) };
        unsafe { ptr::write_bytes(a, 0xff, 4096) };
        unsafe { arena.dealloc(a, layout(4096, 8)) };
        let z = unsafe { arena.alloc_zeroed(layout(8192, 8)) };
        assert_eq!(z, a);
        let bytes = unsafe { std::slice::from_raw_parts(z, 8192) };
        assert!(bytes.iter().all(|&b| b == 0));
        // Growing in place past old data and shrinking back still tracks it.
        let w = unsafe { arena.alloc(layout(16, 8)) };
        let w = unsafe { arena.realloc(w, layout(16, 8), 4096) };
        unsafe { ptr::write_bytes(w, 0xee, 4096) };
        unsafe { arena.dealloc(w, layout(4096, 8)) };
        let z = unsafe { arena.alloc_zeroed(layout(4096, 8)) };
        let bytes = unsafe { std::slice::from_raw_parts(z, 4096) };
        assert!(bytes.iter().all(|&b| b == 0));
    }

    #[test]
    fn a_full_arena_hands_out_system_blocks() {
        let arena = enabled(4096);
        let a = unsafe { arena.alloc(layout(4000, 8)) };
        assert!(arena.owns(a));
        let b = unsafe { arena.alloc(layout(200, 8)) };
        assert!(!b.is_null() && !arena.owns(b));
        // An arena block outgrowing the arena moves to the system allocator.
        let c = unsafe { arena.realloc(a, layout(4000, 8), 10_000) };
        assert!(!c.is_null() && !arena.owns(c));
        unsafe {
            arena.dealloc(b, layout(200, 8));
            arena.dealloc(c, layout(10_000, 8));
        }
    }

    #[test]
    fn threads_get_disjoint_blocks() {
        let arena = enabled(8 << 20);
        let blocks: Vec<Vec<(usize, usize)>> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..4u8)
                .map(|t| {
                    let arena = &arena;
                    scope.spawn(move || {
                        let mut mine = Vec::new();
                        for i in 0..2000usize {
                            let size = 1 + (i * 13 + t as usize) % 97;
                            let block = unsafe { arena.alloc(layout(size, 8)) };
                            unsafe { ptr::write_bytes(block, t, size) };
                            if i % 3 == 0 {
                                unsafe { arena.dealloc(block, layout(size, 8)) };
                            } else {
                                mine.push((block as usize, size));
                            }
                        }
                        for &(block, size) in &mine {
                            let bytes =
                                unsafe { std::slice::from_raw_parts(block as *const u8, size) };
                            assert!(
                                bytes.iter().all(|&b| b == t),
                                "thread {t}'s block was overwritten"
                            );
                        }
                        mine
                    })
                })
                .collect();
            workers.into_iter().map(|w| w.join().unwrap()).collect()
        });
        let mut all: Vec<_> = blocks.into_iter().flatten().collect();
        all.sort();
        for pair in all.windows(2) {
            assert!(pair[0].0 + pair[0].1 <= pair[1].0, "blocks overlap");
        }
    }
}
