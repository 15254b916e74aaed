//! Mali attribute instancing: padded vertex counts, magic divisors, descriptors.
//!
//! A driver calls this module to fill the addressing fields of attribute
//! buffer descriptors for a draw. The model follows the instancing notes in
//! `shared/spec/mali-instancing.rst`, plus the hardware's padding rule for
//! fewer than 20 vertices.
//!
//! # How threads are numbered
//!
//! The thread dispatcher does not hand a vertex shader thread a
//! `(vertex, instance)` pair; it hands it one 32-bit *linear id*. To make the
//! pair cheap to recover, each instance gets a row of
//! [`padded_vertex_count`] thread slots rather than exactly `vertices`, so
//!
//! ```text
//! linear_id = instance · padded + vertex      (vertex < vertices ≤ padded)
//! ```
//!
//! and the slots `vertices..padded` of every row run and are thrown away.
//! The padded count is always 1, 3, 5, 7 or 9 times a power of two, because
//! the dispatcher has dividers for exactly those. The whole grid,
//! `padded × instances` threads, must fit in 32 bits; [`Draw::new`] rejects
//! draws that do not.
//!
//! # The four addressing modes
//!
//! The attribute unit turns the linear id into an element index (then
//! multiplies by the stride); the descriptor picks how:
//!
//! 1. **Linear** — the element is the linear id. With one instance the linear
//!    id *is* the vertex id, so per-vertex attributes of plain draws use it.
//! 2. **Modulus** — the element is `linear_id mod (2m + 1)·2^n`, with `n` in
//!    the shift field and `m` in extra_flags. Instanced per-vertex attributes
//!    use the padded count as the modulus, which strips the instance and
//!    leaves the vertex. This is why the padded count must match the
//!    hardware's bit for bit: the descriptor and the dispatcher have to agree
//!    on the row length.
//! 3. **Power-of-two divide** — the element is `linear_id >> shift`.
//! 4. **Magic divide** — the element is `linear_id / d` for any `d`, done as a
//!    multiply by a 32-bit reciprocal, keep the high word, shift; see
//!    [`magic_divisor`] and the [`magic`] module for why it is exact.
//!
//! A per-instance attribute with GL divisor `D` reads element `instance / D`.
//! Since `instance = linear_id / padded`, that is `linear_id / (padded · D)`:
//! one division by the *hardware divisor* `padded · D`, mode 3 when it is a
//! power of two and mode 4 otherwise. Two special records, for `gl_VertexID`
//! ([`VertexIdRecord`]) and `gl_InstanceID` ([`InstanceIdRecord`]), take the
//! same modulus and divide by the padded count.
//!
//! # Worked example: 70 vertices, 4 instances, divisor 3
//!
//! 70 is `1000110` in binary: the top four bits are `1000` and three bits
//! follow, so the hardware pads to `9·2^3 = 72` and dispatches `72 · 4 = 288`
//! threads. Vertex 5 of instance 2 runs as thread `2·72 + 5 = 149`.
//!
//! - Per-vertex attribute: modulus `72 = 9·2^3`, so shift 3 and extra_flags 4
//!   (`2·4 + 1 = 9`). Thread 149 reads `149 mod 72 = 5`, the vertex.
//! - Per-instance attribute with divisor 3: hardware divisor `72·3 = 216`,
//!   not a power of two, so magic divide with shift 7, extra_flags 1 (round
//!   down) and magic 397682157. Thread 149 reads `149 / 216 = 0 = 2 / 3`.
//!
//! ```
//! use lathe_mali::instancing::{AttributeMode, AttributeRate, Draw};
//!
//! let draw = Draw::new(70, 4)?;
//! assert_eq!(draw.padded_vertex_count(), 72);
//! let thread = draw.linear_id(5, 2).unwrap();
//! assert_eq!(thread, 149);
//!
//! let per_vertex = draw.attribute(AttributeRate::PerVertex);
//! assert_eq!(per_vertex.mode(), AttributeMode::Modulus);
//! assert_eq!((per_vertex.shift(), per_vertex.extra_flags()), (3, 4));
//! assert_eq!(per_vertex.element_index(thread), 5);
//!
//! let per_instance = draw.attribute(AttributeRate::per_instance(3)?);
//! assert_eq!(per_instance.mode(), AttributeMode::MagicDivide);
//! assert_eq!(
//!     (per_instance.shift(), per_instance.extra_flags(), per_instance.magic()),
//!     (7, 1, Some(397_682_157))
//! );
//! assert_eq!(per_instance.element_index(thread), 0);
//! // Instance 3 is the first to read element 1.
//! assert_eq!(per_instance.element_index(draw.linear_id(0, 3).unwrap()), 1);
//!
//! assert_eq!(draw.vertex_id_record().vertex_id(thread), 5);
//! assert_eq!(draw.instance_id_record().instance_id(thread), 2);
//! # Ok::<(), lathe_mali::instancing::InstancingError>(())
//! ```
//!
//! With one instance the same attributes become linear and "divide by 72"
//! (every vertex reads element 0); with 16 vertices (padded count 16) and
//! divisor 2 the hardware divisor is 32, a shift by 5.
//!
//! # Scope
//!
//! This is the linear-id scheme of the instancing notes (Midgard and
//! Bifrost-style attribute buffers). Pointer, stride and size fields, and the
//! continuation record's GL divisor word, are the driver's to pack.

mod descriptor;
mod draw;
mod error;
pub mod magic;
mod padding;

pub use descriptor::{AttributeDescriptor, AttributeMode, Modulus, OddFactor, PowerOfTwoDivisor};
pub use draw::{AttributeRate, Draw, InstanceIdRecord, VertexIdRecord};
pub use error::InstancingError;
pub use magic::{MagicDivisor, magic_divisor};
pub use padding::{MAX_VERTEX_COUNT, padded_vertex_count, try_padded_vertex_count};
