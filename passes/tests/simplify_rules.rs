//! Each folding, simplification and value-numbering rule on a small
//! program: the operation it removes is gone after `optimise`, and the
//! interpreter gives the same outputs before and after on a set of
//! inputs (special float values included for the exact rules; finite ones
//! for the float rules that ignore signed zeros, infinities and NaNs).

use lathe_ir::interp::{self, Invocation, Limits};
use lathe_ir::{GenericOp, Shader};
use lathe_passes::optimise::optimise;

const INTS: [u32; 6] = [0, 1, 7, 0x8000_0000, 0xffff_fffe, u32::MAX];

fn floats(finite_only: bool) -> Vec<u32> {
    let mut v = vec![0.0f32, -0.0, 1.5, -2.0, 3.0e38, 1.0e-40];
    if !finite_only {
        v.extend([f32::INFINITY, f32::NEG_INFINITY, f32::NAN]);
    }
    v.into_iter().map(f32::to_bits).collect()
}

/// A fragment shader reading `%0` and `%1` of type `ty` (flat inputs,
/// also stored to slot 1 so they keep their numbers), running `body`,
/// and storing `%out` (which `body` defines). Values in `body` may be
/// named by letters (`%k`); they are numbered from 2 in order of first
/// appearance.
fn program(ty: &str, body: &str, preserve: bool) -> String {
    let flag = if preserve {
        " preserve_float_specials"
    } else {
        ""
    };
    let text = format!(
        "shader fragment{flag}\nb0:\n  %0:{ty} = load_input slot=0 comp=0 interp=flat\n  %1:{ty} = load_input slot=0 comp=1 interp=flat\n{body}  store_output slot=1 comp=0 %0\n  store_output slot=1 comp=1 %1\n  store_output slot=0 comp=0 %out\n  ret\n"
    );
    number_names(&text)
}

/// `%name` (letters) to `%N`, N from 2 in order of first appearance.
fn number_names(text: &str) -> String {
    let mut names: Vec<String> = Vec::new();
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..=at]);
        rest = &rest[at + 1..];
        let len = rest
            .find(|c: char| !c.is_ascii_lowercase())
            .unwrap_or(rest.len());
        if len > 0 {
            let name = &rest[..len];
            let n = match names.iter().position(|x| x == name) {
                Some(k) => k,
                None => {
                    names.push(name.to_string());
                    names.len() - 1
                }
            };
            out.push_str(&(n + 2).to_string());
            rest = &rest[len..];
        }
    }
    out.push_str(rest);
    out
}

/// Optimises the program; checks `gone` no longer appears and `kept`
/// does, and that outputs agree on every pair of `inputs`.
fn case(ty: &str, body: &str, gone: &str, kept: &str, inputs: &[u32], preserve: bool) {
    let text = program(ty, body, preserve);
    let arena = lathe_ir::Bump::new();
    let mut shader: Shader<GenericOp> =
        lathe_ir::parse(&arena, &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let original = lathe_ir::parse::<GenericOp>(&arena, &text).unwrap();
    optimise(&mut shader);
    lathe_ir::validate(&shader).unwrap();
    let after = lathe_ir::print(&shader);
    assert!(
        !after.contains(gone),
        "`{gone}` left in\n{after}\nfrom\n{text}"
    );
    assert!(
        after.contains(kept),
        "`{kept}` missing in\n{after}\nfrom\n{text}"
    );
    for &a in inputs {
        for &b in inputs {
            let mut inv = Invocation::default();
            inv.inputs.insert((0, 0), a);
            inv.inputs.insert((0, 1), b);
            let limits = Limits::default();
            let Ok(expected) = interp::run(&original, &inv, limits) else {
                continue;
            };
            let got = interp::run(&shader, &inv, limits);
            if preserve {
                assert_eq!(got, Ok(expected), "inputs {a:#x} {b:#x}\n{text}\n{after}");
            } else {
                // The float rules may change the sign of a zero.
                let zero = |(_, bits): &(lathe_ir::Type, u32)| bits & 0x7fff_ffff == 0;
                let got = got.unwrap_or_else(|e| panic!("{e}\n{after}"));
                for (at, want) in &expected.outputs {
                    let have = &got.outputs[at];
                    assert!(
                        have == want || (zero(have) && zero(want)),
                        "inputs {a:#x} {b:#x}: {at:?} {have:?} != {want:?}\n{text}\n{after}"
                    );
                }
            }
        }
    }
}

fn exact_int(body: &str, gone: &str, kept: &str) {
    case("u32", body, gone, kept, &INTS, true);
}

#[test]
fn integer_identities() {
    let zero = "  %z:u32 = const 0\n";
    let one = "  %k:u32 = const 1\n";
    let ones = "  %m:u32 = const 4294967295\n";
    let store0 = "slot=0 comp=0 %0";
    exact_int(&format!("{zero}  %out:u32 = iadd %0, %z\n"), "iadd", store0);
    exact_int(&format!("{zero}  %out:u32 = iadd %z, %0\n"), "iadd", store0);
    exact_int(&format!("{zero}  %out:u32 = isub %0, %z\n"), "isub", store0);
    exact_int("  %out:u32 = isub %0, %0\n", "isub", "const 0");
    exact_int(&format!("{one}  %out:u32 = imul %k, %0\n"), "imul", store0);
    exact_int(
        &format!("{zero}  %out:u32 = imul %0, %z\n"),
        "imul",
        "const 0",
    );
    exact_int(&format!("{one}  %out:u32 = udiv %0, %k\n"), "udiv", store0);
    // Unsigned divisions and remainders by powers of two (2^31 too).
    for k in [8u32, 0x8000_0000] {
        let body = format!("  %k:u32 = const {k}\n  %out:u32 = udiv %0, %k\n");
        exact_int(&body, "udiv", "shr %0");
        let body = format!("  %k:u32 = const {k}\n  %out:u32 = umod %0, %k\n");
        exact_int(&body, "umod", &format!("const {}", k - 1));
    }
    // Signed divisions and remainders by positive powers of two (2^30 the
    // largest in i32), rounding towards zero; not by 2^31 (negative).
    let signed = [
        0,
        1,
        7,
        8,
        9,
        0x8000_0000,
        0x8000_0001,
        0xffff_fff7,
        0xffff_fff8,
        u32::MAX,
    ];
    for k in [2u32, 8, 0x4000_0000] {
        for op in ["idiv", "irem"] {
            let body = format!("  %k:i32 = const {k}\n  %out:i32 = {op} %0, %k\n");
            case("i32", &body, op, "ashr", &signed, true);
        }
    }
    for op in ["idiv", "irem"] {
        let body = format!("  %k:i32 = const -2147483648\n  %out:i32 = {op} %0, %k\n");
        case("i32", &body, "never printed", op, &signed, true);
        let body = format!("  %k:i16 = const 16\n  %out:i16 = {op} %0, %k\n");
        let halves = [0, 5, 16, 17, 0x7fff, 0x8000, 0x8001, 0xffef, 0xfff0, 0xffff];
        case("i16", &body, op, "ashr", &halves, true);
    }
    exact_int(&format!("{ones}  %out:u32 = and %0, %m\n"), "and", store0);
    exact_int(
        &format!("{zero}  %out:u32 = and %0, %z\n"),
        "and",
        "const 0",
    );
    exact_int("  %out:u32 = and %0, %0\n", "and", store0);
    exact_int(&format!("{zero}  %out:u32 = or %z, %0\n"), " or", store0);
    exact_int(
        &format!("{ones}  %out:u32 = or %0, %m\n"),
        " or",
        "const 4294967295",
    );
    exact_int(&format!("{zero}  %out:u32 = xor %0, %z\n"), "xor", store0);
    exact_int("  %out:u32 = xor %1, %1\n", "xor", "const 0");
    exact_int("  %n:u32 = not %0\n  %out:u32 = not %n\n", "not", store0);
    exact_int(&format!("{zero}  %out:u32 = shl %0, %z\n"), "shl", store0);
    exact_int(
        &format!("{zero}  %out:u32 = shr %z, %1\n"),
        "shr",
        "const 0",
    );
    exact_int("  %out:u32 = umax %1, %1\n", "umax", "slot=0 comp=0 %1");
    // A product with a power of two is a shift, either operand order and
    // signed too (the low 32 bits are the same).
    let sixty_four = "  %c:u32 = const 64\n";
    exact_int(
        &format!("{sixty_four}  %out:u32 = imul %0, %c\n"),
        "imul",
        "shl %0",
    );
    exact_int(
        &format!("{sixty_four}  %out:u32 = imul %c, %0\n"),
        "imul",
        "shl %0",
    );
    case(
        "i32",
        "  %c:i32 = const 8\n  %out:i32 = imul %0, %c\n",
        "imul",
        "shl %0",
        &INTS,
        true,
    );
    // Not a power of two: the multiply stays.
    exact_int(
        "  %c:u32 = const 12\n  %out:u32 = imul %0, %c\n",
        "shl",
        "imul",
    );
}

#[test]
fn compares_and_selects() {
    let sel = "  %a:u32 = const 5\n  %b:u32 = const 9\n";
    exact_int(
        &format!("{sel}  %c:bool = ieq %0, %0\n  %out:u32 = sel %c, %a, %b\n"),
        "sel",
        "const 5",
    );
    exact_int(
        &format!("{sel}  %c:bool = ult %1, %1\n  %out:u32 = sel %c, %a, %b\n"),
        "sel",
        "const 9",
    );
    exact_int(
        "  %c:bool = ult %0, %1\n  %out:u32 = sel %c, %1, %1\n",
        "sel",
        "slot=0 comp=0 %1",
    );
}

#[test]
fn constants_fold_with_the_interpreters_values() {
    case(
        "f32",
        "  %a:f32 = const 1.5\n  %b:f32 = const 2.25\n  %s:f32 = fadd %a, %b\n  %out:f32 = fmul %s, %0\n",
        "fadd",
        "const 3.75",
        &floats(false),
        true,
    );
    // Undefined for these constants: left for the program to decide.
    exact_int(
        "  %a:u32 = const 7\n  %z:u32 = const 0\n  %q:u32 = udiv %a, %z\n  %out:u32 = iadd %q, %0\n",
        "never printed",
        "udiv",
    );
    exact_int(
        "  %a:u32 = const 7\n  %s:u32 = const 32\n  %out:u32 = shl %a, %s\n",
        "never printed",
        "shl",
    );
}

#[test]
fn negations_and_copies() {
    let all = floats(false);
    let neg = "  %n:f32 = mov neg %0\n";
    case(
        "f32",
        &format!("{neg}  %out:f32 = mov neg %n\n"),
        "mov",
        "slot=0 comp=0 %0",
        &all,
        true,
    );
    case(
        "f32",
        &format!("{neg}  %out:f32 = mov abs %n\n"),
        "neg",
        "mov abs %0",
        &all,
        true,
    );
    case(
        "f32",
        "  %out:f32 = mov %0\n",
        "mov",
        "slot=0 comp=0 %0",
        &all,
        true,
    );
    case(
        "f32",
        "  %out:f32 = cvt %0\n",
        "cvt",
        "slot=0 comp=0 %0",
        &all,
        true,
    );
}

#[test]
fn float_rules_apply_unless_specials_are_preserved() {
    let finite = floats(true);
    let k = |x: &str| format!("  %k:f32 = const {x}\n");
    let cases: [(String, &str, &str); 9] = [
        (
            format!("{}  %out:f32 = fmul %0, %k\n", k("0.0")),
            "fmul",
            "const 0.0",
        ),
        (
            format!("{}  %out:f32 = fmul %k, %0\n", k("1.0")),
            "fmul",
            "slot=0 comp=0 %0",
        ),
        (
            format!("{}  %out:f32 = fmul %0, %k\n", k("-1.0")),
            "fmul",
            "mov neg %0",
        ),
        (
            format!("{}  %out:f32 = fadd %k, %0\n", k("0.0")),
            "fadd",
            "slot=0 comp=0 %0",
        ),
        (
            format!("{}  %out:f32 = fsub %0, %k\n", k("-0.0")),
            "fsub",
            "slot=0 comp=0 %0",
        ),
        (
            "  %out:f32 = fsub %1, %1\n".to_string(),
            "fsub",
            "const 0.0",
        ),
        (
            format!("{}  %out:f32 = ffma %0, %k, %1\n", k("0.0")),
            "ffma",
            "slot=0 comp=0 %1",
        ),
        (
            format!("{}  %out:f32 = ffma %0, %1, %k\n", k("0.0")),
            "ffma",
            "fmul %0, %1",
        ),
        (
            format!("{}  %out:f32 = ffma %k, %0, %1\n", k("1.0")),
            "ffma",
            "fadd %0, %1",
        ),
    ];
    for (body, gone, kept) in &cases {
        case("f32", body, gone, kept, &finite, false);
        // Preserved: the operation stays, and the outputs agree on every
        // special value too.
        case("f32", body, "never printed", gone, &floats(false), true);
    }
}

/// A division by a constant whose reciprocal is a normal float becomes a
/// multiplication by the reciprocal, specials preserved or not (exact
/// for a power of two: the outputs' bits agree on every input; the
/// division is approximate in the IR, the product is not); `x / 1` is
/// `x` unless specials are preserved; a zero, infinite or subnormal
/// reciprocal keeps the division.
#[test]
fn division_by_a_constant_multiplies_by_its_reciprocal() {
    let optimised = |divisor: &str, preserve: bool| {
        let body = format!("  %k:f32 = const {divisor}\n  %out:f32 = fdiv %0, %k\n");
        let text = program("f32", &body, preserve);
        let arena = lathe_ir::Bump::new();
        let original = lathe_ir::parse::<GenericOp>(&arena, &text).unwrap();
        let mut shader = lathe_ir::parse::<GenericOp>(&arena, &text).unwrap();
        optimise(&mut shader);
        lathe_ir::validate(&shader).unwrap();
        if ["4.0", "1.0"].contains(&divisor) {
            for a in floats(false) {
                let mut inv = Invocation::default();
                inv.inputs.insert((0, 0), a);
                inv.inputs.insert((0, 1), 0);
                let run = |s: &Shader<GenericOp>| interp::run(s, &inv, Limits::default()).unwrap();
                assert_eq!(run(&original).outputs, run(&shader).outputs, "{a:#x}");
            }
        }
        lathe_ir::print(&shader)
    };
    for preserve in [false, true] {
        let after = optimised("4.0", preserve);
        assert!(
            !after.contains("fdiv") && after.contains("const 0.25"),
            "{after}"
        );
        let after = optimised("3.0", preserve);
        let third = format!("{}", 1.0f32 / 3.0);
        assert!(!after.contains("fdiv") && after.contains(&third), "{after}");
        for divisor in ["0.0", "1.0e-40", "3.0e38"] {
            let after = optimised(divisor, preserve);
            assert!(after.contains("fdiv"), "{divisor}: {after}");
        }
    }
    assert!(optimised("1.0", false).contains("slot=0 comp=0 %0"));
    assert!(optimised("1.0", true).contains("fmul %0"));
}

#[test]
fn common_subexpressions_only_where_one_dominates() {
    // Twins in one block, operands in either order of a commutative op
    // (float: only without preserved NaN payloads).
    case(
        "f32",
        "  %a:f32 = fadd %0, %1\n  %b:f32 = fadd %1, %0\n  %out:f32 = fmul %a, %b\n",
        "fadd %1, %0",
        "fmul %2, %2",
        &floats(true),
        false,
    );
    // UBO loads are pure within the shader.
    let ubo = "  %o:u32 = const 4\n  %a:u32 = load_ubo binding=0 %o\n  %b:u32 = load_ubo binding=0 %o\n  %out:u32 = iadd %a, %b\n";
    exact_int(ubo, "%4:u32 = load_ubo", "iadd %3, %3");
    // Twins in two arms of a branch: neither dominates the other.
    let text = "  %c:bool = flt %0, %1\n  branch %c, b1, b2\nb1:\n  %x:f32 = fmul %0, %1\n  jump b3\nb2:\n  %y:f32 = fmul %0, %1\n  jump b3\nb3:\n  %out:f32 = phi [%x, b1], [%y, b2]\n";
    let arena = lathe_ir::Bump::new();
    let mut shader = lathe_ir::parse::<GenericOp>(&arena, &program("f32", text, true)).unwrap();
    optimise(&mut shader);
    assert_eq!(lathe_ir::print(&shader).matches("fmul").count(), 2);
}

#[test]
fn ssbo_loads_are_not_merged_across_a_store() {
    let text = "shader compute\nb0:\n  %0:u32 = const 0\n  %1:u32 = load_ssbo binding=0 %0\n  %2:u32 = const 1\n  store_ssbo binding=0 %0, %2\n  %3:u32 = load_ssbo binding=0 %0\n  %4:u32 = iadd %1, %3\n  store_ssbo binding=0 %2, %4\n  ret\n";
    let arena = lathe_ir::Bump::new();
    let mut shader = lathe_ir::parse::<GenericOp>(&arena, text).unwrap();
    optimise(&mut shader);
    assert_eq!(lathe_ir::print(&shader).matches("load_ssbo").count(), 2);
}

#[test]
fn a_branch_on_a_constant_becomes_a_jump() {
    let text = "  %c:bool = const true\n  branch %c, b1, b2\nb1:\n  %x:u32 = iadd %0, %1\n  jump b3\nb2:\n  %y:u32 = isub %0, %1\n  jump b3\nb3:\n  %out:u32 = phi [%x, b1], [%y, b2]\n";
    exact_int(text, "isub", "iadd");
    let arena = lathe_ir::Bump::new();
    let mut shader = lathe_ir::parse::<GenericOp>(&arena, &program("u32", text, true)).unwrap();
    optimise(&mut shader);
    assert!(!lathe_ir::print(&shader).contains("branch"));
}
