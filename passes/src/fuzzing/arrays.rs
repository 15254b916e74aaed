//! Random shaders over an array at computed indices, for the backends'
//! array tests (`ir3_arrays`, `valhall_arrays`): stores and loads through
//! address operands, in a branch and in a loop, as
//! [`crate::promote_arrays`] (short arrays) and [`crate::private_arrays`]
//! (long ones) must handle them before selection.
//!
//! ```
//! let text = lathe_passes::fuzzing::arrays::random_program(3);
//! let arena = lathe_ir::Bump::new();
//! let shader = lathe_ir::parse::<lathe_ir::GenericOp>(&arena, &text).unwrap();
//! lathe_ir::validate(&shader).unwrap();
//! assert!(text.contains("addr="), "{text}");
//! ```

use std::fmt::Write;

struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 16) % n
    }
}

/// A vertex shader over an array `a0: u32[len]`: every element stored
/// from an input or a constant, then random computed-index stores and
/// loads (indices `min(input & mask, len - 1)`, `mask` the length's
/// power of two less one: in bounds with operations every backend
/// selects), a store in one side of a branch, and a loop that adds its
/// counter into each element through a computed index; every loaded
/// value is an output (of the final elements, at most 16 spread over the
/// array). One program in three has an array longer than
/// [`crate::promote_arrays::MAX_DYNAMIC_LEN`], which stays in private
/// memory; the others are short and promoted.
pub fn random_program(seed: u64) -> String {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let len = if rng.below(3) == 0 {
        crate::promote_arrays::MAX_DYNAMIC_LEN + 1 + rng.below(40) as u32
    } else {
        2 + rng.below(7) as u32
    };
    let mask = len.next_power_of_two() - 1;
    let mut t = format!("shader vertex\narray a0: u32[{len}]\nb0:\n");
    for k in 0..4 {
        writeln!(t, "  %{k}:u32 = load_input slot=0 comp={k} interp=flat").unwrap();
    }
    writeln!(t, "  %4:u32 = const {len}").unwrap();
    writeln!(t, "  %5:u32 = const 0").unwrap();
    writeln!(t, "  %6:u32 = const 1").unwrap();
    writeln!(t, "  %7:u32 = const {mask}").unwrap();
    writeln!(t, "  %8:u32 = const {}", len - 1).unwrap();
    let mut next = 9;
    // Loaded values, stored as outputs at the end (as shaders do).
    let mut loaded = Vec::new();
    let mut fresh = || {
        next += 1;
        next - 1
    };
    for k in 0..len {
        let v = rng.below(4);
        writeln!(t, "  array_store array=a0 offset={k} %{v}").unwrap();
    }
    let mut body = |t: &mut String, rng: &mut Rng, fresh: &mut dyn FnMut() -> u32| {
        for _ in 0..2 + rng.below(4) {
            let (low, i) = (fresh(), fresh());
            writeln!(t, "  %{low}:u32 = and %{}, %7", rng.below(4)).unwrap();
            writeln!(t, "  %{i}:u32 = umin %{low}, %8").unwrap();
            if rng.below(2) == 0 {
                let v = fresh();
                writeln!(t, "  %{v}:u32 = iadd %{}, %{}", rng.below(4), rng.below(4)).unwrap();
                writeln!(t, "  array_store array=a0 offset=0 %{v} addr=%{i}").unwrap();
            } else {
                let r = fresh();
                writeln!(t, "  %{r}:u32 = array_load array=a0 offset=0 addr=%{i}").unwrap();
                loaded.push(r);
            }
        }
    };
    body(&mut t, &mut rng, &mut fresh);
    // A store on one side of a branch.
    let c = fresh();
    writeln!(t, "  %{c}:bool = ult %0, %1\n  branch %{c}, b1, b2\nb1:").unwrap();
    let v = rng.below(4);
    writeln!(
        t,
        "  array_store array=a0 offset={} %{v}\n  jump b2\nb2:",
        rng.below(len as u64)
    )
    .unwrap();
    // A loop adding the counter to each element.
    let (n, e, s, n2, more) = (fresh(), fresh(), fresh(), fresh(), fresh());
    writeln!(t, "  jump b3\nb3:\n  %{n}:u32 = phi [%5, b2], [%{n2}, b3]").unwrap();
    writeln!(t, "  %{e}:u32 = array_load array=a0 offset=0 addr=%{n}").unwrap();
    writeln!(t, "  %{s}:u32 = iadd %{e}, %{n}").unwrap();
    writeln!(t, "  array_store array=a0 offset=0 %{s} addr=%{n}").unwrap();
    writeln!(t, "  %{n2}:u32 = iadd %{n}, %6").unwrap();
    writeln!(
        t,
        "  %{more}:bool = ult %{n2}, %4\n  branch %{more}, b3, b4\nb4:"
    )
    .unwrap();
    body(&mut t, &mut rng, &mut fresh);
    let mut ends = Vec::new();
    for k in (0..len).step_by(len.div_ceil(16) as usize) {
        let r = fresh();
        writeln!(t, "  %{r}:u32 = array_load array=a0 offset={k}").unwrap();
        ends.push(r);
    }
    for (k, r) in loaded.iter().enumerate() {
        writeln!(t, "  store_output slot={} comp=0 %{r}", 1 + k).unwrap();
    }
    for (k, r) in ends.iter().enumerate() {
        writeln!(t, "  store_output slot={} comp={} %{r}", 20 + k / 4, k % 4).unwrap();
    }
    t.push_str("  ret\n");
    t
}

/// A vertex shader storing three positions into a table and reading the
/// one its vertex index selects: with four vertex threads the fourth
/// reads past the table (undefined), so a verifier compares three.
pub const VERTEX_INDEXED_TABLE: &str = "shader vertex
array a0: f32[3]
b0:
  %0:u32 = load_sysval sv=vertex_index
  %1:f32 = const 0x3f800000
  %2:f32 = const 0xbf800000
  %3:f32 = const 0x40400000
  array_store array=a0 offset=0 %1
  array_store array=a0 offset=1 %2
  array_store array=a0 offset=2 %3
  %4:f32 = array_load array=a0 offset=0 addr=%0
  store_output slot=0 comp=0 %4
  ret
";

/// A fragment shader with an array of 100 words indexed by values it
/// computes (too long to promote): it fills the array with a function of
/// the index and an input, sorts nothing but swaps two elements chosen
/// by inputs, and outputs three elements read at computed indices.
/// Every index stays in bounds (`min(x & 127, 99)`).
pub const PRIVATE_ARRAY: &str = "shader fragment
array a0: f32[100]
b0:
  %0:u32 = load_input slot=0 comp=0 interp=flat
  %1:u32 = load_input slot=0 comp=1 interp=flat
  %2:f32 = load_input slot=1 comp=0 interp=smooth
  %3:u32 = const 0
  %4:u32 = const 1
  %5:u32 = const 100
  %6:u32 = const 127
  %7:u32 = const 99
  jump b1
b1:
  %8:u32 = phi [%3, b0], [%11, b1]
  %9:f32 = cvt %8
  %10:f32 = fmul %9, %2
  array_store array=a0 offset=0 %10 addr=%8
  %11:u32 = iadd %8, %4
  %12:bool = ult %11, %5
  branch %12, b1, b2
b2:
  %13:u32 = and %0, %6
  %14:u32 = umin %13, %7
  %15:u32 = and %1, %6
  %16:u32 = umin %15, %7
  %17:f32 = array_load array=a0 offset=0 addr=%14
  %18:f32 = array_load array=a0 offset=0 addr=%16
  array_store array=a0 offset=0 %18 addr=%14
  array_store array=a0 offset=0 %17 addr=%16
  %19:f32 = array_load array=a0 offset=0 addr=%14
  %20:f32 = array_load array=a0 offset=0 addr=%16
  %21:f32 = array_load array=a0 offset=42
  store_output slot=0 comp=0 %19
  store_output slot=0 comp=1 %20
  store_output slot=0 comp=2 %21
  store_output slot=0 comp=3 %17
  ret
";

/// A table of three `vec2` positions indexed by the vertex index (as
/// `var pos = array(vec2(...), ...)` lowers: six scalars, the index
/// times two): long enough to become constant data
/// ([`crate::constant_data`]). The fourth of four threads reads past it.
pub const VERTEX_INDEXED_VEC2_TABLE: &str = "shader vertex
array a0: f32[6]
b0:
  %0:u32 = load_sysval sv=vertex_index
  %1:f32 = const 0.0
  %2:f32 = const 0.5
  %3:f32 = const -0.5
  array_store array=a0 offset=0 %1
  array_store array=a0 offset=1 %2
  array_store array=a0 offset=2 %3
  array_store array=a0 offset=3 %3
  array_store array=a0 offset=4 %2
  array_store array=a0 offset=5 %3
  %4:u32 = const 2
  %5:u32 = imul %0, %4
  %6:f32 = array_load array=a0 offset=0 addr=%5
  %7:f32 = array_load array=a0 offset=1 addr=%5
  store_output slot=0 comp=0 %6
  store_output slot=0 comp=1 %7
  ret
";

/// Compiles and verifies `programs` random programs (`random_program`
/// seeds `0..programs`) on every model with 8 threads, through
/// `compile_and_verify(text, model, options)` (the backend's whole
/// pipeline, then the verifier: the number of values compared). Panics
/// naming the seed, model and program on the first failure or when a run
/// compares fewer than 3 values per thread.
pub fn check_random_programs(
    programs: u64,
    models: &[&str],
    compile_and_verify: impl Fn(
        &str,
        &str,
        &lathe_ir::verify::Options,
    ) -> Result<usize, lathe_ir::verify::VerifyError>,
) {
    for seed in 0..programs {
        let text = random_program(seed);
        for model in models {
            let options = lathe_ir::verify::Options {
                seed,
                threads: 8,
                ..Default::default()
            };
            match compile_and_verify(&text, model, &options) {
                Ok(compared) => assert!(compared >= 8 * 3, "seed {seed}: {compared} compared"),
                Err(e) => panic!("seed {seed} on {model}: {e}\n{text}"),
            }
        }
    }
}
