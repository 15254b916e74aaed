//! Text form: the examples are canonical (print(parse(t)) == t), other
//! spellings print canonically, and parse errors point at the problem.

use lathe_ir::{GenericOp, Opcode, Shader, parse, print, validate};

fn examples() -> Vec<(String, String)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/examples");
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .expect("examples folder")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "lir"))
        .map(|p| {
            (
                p.display().to_string(),
                std::fs::read_to_string(&p).expect("readable"),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn examples_are_valid_and_canonical() {
    let examples = examples();
    assert!(examples.len() >= 3);
    for (name, text) in examples {
        let arena = lathe_ir::Bump::new();
        let shader: Shader<GenericOp> =
            parse(&arena, &text).unwrap_or_else(|e| panic!("{name}: {e}"));
        validate(&shader).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(print(&shader), text, "{name} is not canonical");
    }
}

#[test]
fn any_numbering_and_forward_references_print_canonically() {
    let text = "\
; comments and blank lines are allowed

shader vertex
b7:
  %10:i32 = input index=0   ; a meta input
  jump b3
b3:
  %4:i32 = phi [%10, b7], [%5, b3]
  %5:i32 = iadd %4, %10
  %6:bool = ilt %5, %10
  branch %6, b3, b9
b9:
  output index=2 %5
  ret
";
    let arena = lathe_ir::Bump::new();
    let shader: Shader<GenericOp> = parse(&arena, text).unwrap();
    validate(&shader).unwrap();
    assert_eq!(
        print(&shader),
        "\
shader vertex
b0:
  %0:i32 = input index=0
  jump b1
b1:
  %1:i32 = phi [%0, b0], [%2, b1]
  %2:i32 = iadd %1, %0
  %3:bool = ilt %2, %0
  branch %3, b1, b2
b2:
  output index=2 %2
  ret
"
    );
}

fn parse_error(text: &str) -> String {
    let arena = lathe_ir::Bump::new();
    match parse::<GenericOp>(&arena, text) {
        Ok(_) => panic!("parsed: {text}"),
        Err(e) => {
            let s = e.to_string();
            // Every diagnostic has the caret excerpt.
            assert!(s.lines().count() == 3 && s.ends_with('^'), "{s}");
            s.lines().next().unwrap_or_default().to_string()
        }
    }
}

#[test]
fn parse_errors_have_line_col_and_message() {
    let h = "shader fragment\n";
    let cases: &[(&str, &str)] = &[
        ("", "1:1: expected `shader <stage>` header"),
        (
            "shader pixel\n",
            "1:8: stage is vertex, fragment or compute",
        ),
        (
            "shader fragment\n  ret\n",
            "2:3: instruction outside a block (expected a label like `b0:`)",
        ),
        ("b0:\n  %0:f64 = const 1\n", "4:6: unknown type `f64`"),
        ("b0:\n  %0:f32 = frob %1\n", "4:12: unknown opcode `frob`"),
        (
            "b0:\n  %0:f32 = const 1.0.0\n",
            "4:18: `1.0.0` is not a valid f32 constant",
        ),
        (
            "b0:\n  %0:f32 = const inf\n",
            "4:18: `inf` is not a valid f32 constant",
        ),
        (
            "b0:\n  %0:f32 = load_input slot=0 comp=0\n",
            "4:12: missing attribute `interp=`",
        ),
        (
            "b0:\n  %0:f32 = load_input slot=x comp=0 interp=flat\n",
            "4:23: `slot` needs a number or a built-in name, got `x`",
        ),
        (
            "b0:\n  %0:f32 = fadd %1 %2\n",
            "4:20: expected `,` between operands",
        ),
        (
            "b0:\n  %0:f32 = fadd %1,\n",
            "4:19: expected an operand after `,`",
        ),
        ("b0:\n  jump b4\n", "4:8: block b4 is never defined"),
        (
            "b0:\n  %1:f32 = mov %9\n  ret\n",
            "4:16: value %9 is never defined",
        ),
        (
            "b0:\n  %1:f32 = const 1.0\n  %1:f32 = const 2.0\n",
            "5:3: value %1 is defined twice",
        ),
        ("b0:\nb0:\n", "4:1: block b0 is defined twice"),
        (
            "b0:\n  %0:f32 = phi %1, b0\n",
            "4:12: phi operands are `[%value, block]` pairs",
        ),
        ("b0:\n  ret $\n", "4:7: unexpected character `$`"),
        (
            "b0:\n  %x:f32 = const 1.0\n",
            "4:3: values are named `%` and a number",
        ),
        (
            "b0:\n  %0:f32 = split lane=300 %1\n",
            "4:18: lane out of range",
        ),
        (
            "b0:\n  %0:f32 = array_load array=a0 offset=0 addr=%1 %2\n",
            "4:49: `addr=` comes last",
        ),
    ];
    for (body, want) in cases {
        let text = if body.starts_with("shader") || body.is_empty() {
            body.to_string()
        } else {
            format!("{h}{body}")
        };
        // Line numbers in the table count the two header lines.
        let got = parse_error(&text);
        let want = if body.starts_with("shader") || body.is_empty() {
            want.to_string()
        } else {
            // Case bodies start on line 2 ("b0:") after the header.
            let (line, rest) = want.split_once(':').unwrap();
            format!("{}:{rest}", line.parse::<u32>().unwrap() - 1)
        };
        assert_eq!(got, want, "for input {body:?}");
    }
}

#[test]
fn caret_sits_under_the_column() {
    let arena = lathe_ir::Bump::new();
    let err =
        parse::<GenericOp>(&arena, "shader fragment\nb0:\n  %0:f32 = fadd %1 %2\n").unwrap_err();
    assert_eq!((err.line, err.col), (3, 20));
    assert_eq!(
        err.with_file("x.lir").lines().next(),
        Some("x.lir:3:20: expected `,` between operands")
    );
    let lines: Vec<_> = err.to_string().lines().map(str::to_string).collect();
    assert_eq!(lines[1], "    %0:f32 = fadd %1 %2");
    assert_eq!(lines[2].find('^'), Some(2 + 19));
}

#[test]
fn parser_never_panics_on_damaged_text() {
    // Every prefix, and every single-byte substitution with a few
    // troublesome characters, of every example.
    for (_, text) in examples() {
        let bytes = text.as_bytes();
        for cut in 0..bytes.len() {
            if let Ok(prefix) = std::str::from_utf8(&bytes[..cut]) {
                let arena = lathe_ir::Bump::new();
                let _ = parse::<GenericOp>(&arena, prefix);
            }
        }
        for pos in (0..bytes.len()).step_by(3) {
            for sub in [b'%', b'[', b',', b'=', b'9', b'b', b' ', b':', b'x'] {
                let mut damaged = bytes.to_vec();
                damaged[pos] = sub;
                if let Ok(t) = std::str::from_utf8(&damaged) {
                    let arena = lathe_ir::Bump::new();
                    if let Ok(s) = parse::<GenericOp>(&arena, t) {
                        // Whatever parses must print and reparse identically.
                        let printed = print(&s);
                        if !printed.contains('?') {
                            let arena2 = lathe_ir::Bump::new();
                            let again =
                                parse::<GenericOp>(&arena2, &printed).expect("printed text parses");
                            assert_eq!(print(&again), printed);
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn the_all_opcodes_example_covers_every_opcode_attribute_and_type() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/all_opcodes.lir");
    let text = std::fs::read_to_string(path).expect("all_opcodes.lir");
    let arena = lathe_ir::Bump::new();
    let shader: Shader<GenericOp> = parse(&arena, &text).unwrap_or_else(|e| panic!("{e}"));
    validate(&shader).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(print(&shader), text);
    let used: std::collections::HashSet<&str> = shader
        .insts_in_order()
        .map(|(_, i)| shader.inst(i).op.name())
        .collect();
    let attribute_ops = [
        "const",
        "mov",
        "load_input",
        "store_output",
        "load_uniform",
        "load_ubo",
        "sample",
        "array_load",
        "array_store",
        "pack",
        "unpack",
        "ddx",
        "ddy",
        "load_sysval",
        "gather",
        "texel_fetch",
        "texture_size",
        "texture_levels",
        "image_load",
        "image_store",
        "image_atomic",
        "image_size",
        "load_ssbo",
        "store_ssbo",
        "ssbo_atomic",
        "ssbo_size",
        "shared_atomic",
    ];
    let simple: Vec<&str> = GenericOp::simple_ops().map(|op| op.name()).collect();
    for name in simple
        .iter()
        .copied()
        .chain(attribute_ops)
        .chain(lathe_ir::opcode::STRUCTURAL_NAMES)
    {
        assert!(used.contains(name), "`{name}` is missing from {path}");
    }
    for spelling in [
        "interp=smooth",
        "interp=flat",
        "interp=noperspective",
        "loc=centroid",
        "loc=sample",
        "mov abs %",
        "mov neg %",
        "mov abs neg %",
        "addr=%",
        "lane=",
        "index=",
        "texture=",
        "sampler=",
        "binding=",
        "array=a1",
        "offset=",
        "slot=",
        "comp=",
        "const true",
        "const false",
        "const 0x7fc00000",
        "const -0.0",
        "const 1e-45",
        "const 6e-8",
        "slot=pos",
        "slot=frag_depth",
        "slot=tex3",
        "dim=cube",
        "dim=3d",
        "dim=1d",
        " array",
        " ms ",
        "lod=grad",
        "lod=bias",
        "lod=explicit",
        " offset",
        " compare",
        "mode=fine",
        "mode=coarse",
        "sv=",
        "format=",
        "op=",
    ] {
        assert!(
            text.contains(spelling),
            "`{spelling}` is missing from {path}"
        );
    }
    for ty in [
        ":bool ", ":f16 ", ":f32 ", ":i16 ", ":i32 ", ":u32 ", ":f32x2 ", ":f32x4 ", ":u16 ",
    ] {
        assert!(text.contains(ty), "type `{ty}` is missing from {path}");
    }
}

/// Deterministic xorshift, so failures reproduce.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

#[test]
fn parser_never_panics_on_random_edits_and_bytes() {
    // Fragments that reach the parser's less travelled paths: huge numbers,
    // dangling punctuation, structural keywords, non-ASCII.
    const SPLICES: &[&str] = &[
        "%",
        "%0",
        "%4294967296",
        "b",
        "b0",
        "b99999999999",
        "[",
        "]",
        ",",
        "=",
        ":",
        "phi",
        "[%1, b0]",
        "split lane=",
        "addr=%1",
        "addr=",
        "const",
        "0x",
        "0x1ffffffff",
        "f32x16",
        "f32x0",
        "\n",
        "\r\n",
        "\t",
        "é",
        ";",
        "-",
        "shader vertex\n",
        "array a0: f32[0]\n",
        "array a1: i32[4294967296]\n",
        "index=4294967296",
        "jump",
        "branch",
        "ret",
        "b0:\n",
        "%9:f32 = ",
        "input index=0",
        "output",
        "mov abs neg",
        "slot=65536",
    ];
    let examples = examples();
    let mut rng = Rng(0x5eed_1234_abcd_ef01);
    let (mut parsed, mut rejected) = (0, 0);
    for round in 0..3000 {
        let mut bytes: Vec<u8> = if round % 8 == 7 {
            // Random bytes, mostly printable.
            (0..rng.below(120))
                .map(|_| match rng.below(4) {
                    0 => rng.below(256) as u8,
                    _ => {
                        let common = b" %:=,[]\nb0123fsxai.-";
                        common[rng.below(common.len())]
                    }
                })
                .collect()
        } else {
            examples[rng.below(examples.len())].1.as_bytes().to_vec()
        };
        for _ in 0..1 + rng.below(4) {
            let pos = rng.below(bytes.len() + 1);
            match rng.below(4) {
                0 => {
                    let end = (pos + rng.below(30)).min(bytes.len());
                    bytes.drain(pos..end);
                }
                1 => bytes.insert(pos, rng.below(128) as u8),
                2 => {
                    let s = SPLICES[rng.below(SPLICES.len())];
                    bytes.splice(pos..pos, s.bytes());
                }
                _ => bytes.truncate(pos),
            }
        }
        let Ok(text) = String::from_utf8(bytes) else {
            continue;
        };
        let arena = lathe_ir::Bump::new();
        match parse::<GenericOp>(&arena, &text) {
            Ok(shader) => {
                parsed += 1;
                if validate(&shader).is_ok() {
                    let printed = print(&shader);
                    let arena2 = lathe_ir::Bump::new();
                    let again = parse::<GenericOp>(&arena2, &printed)
                        .unwrap_or_else(|e| panic!("printed text does not parse: {e}\n{printed}"));
                    assert_eq!(print(&again), printed);
                }
            }
            Err(e) => {
                rejected += 1;
                // The position is real and the excerpt is that line.
                let lines: Vec<&str> = text.lines().collect();
                assert!(e.line >= 1 && e.col >= 1, "{e:?}");
                assert!(e.line as usize <= lines.len().max(1), "{e:?} for {text:?}");
                assert_eq!(
                    e.source_line,
                    lines.get(e.line as usize - 1).copied().unwrap_or(""),
                    "{e:?}"
                );
                let shown = e.to_string();
                assert!(
                    shown.starts_with(&format!("{}:{}: ", e.line, e.col)) && shown.ends_with('^'),
                    "{shown}"
                );
            }
        }
    }
    assert!(
        parsed > 50 && rejected > 1000,
        "{parsed} parsed, {rejected} rejected"
    );
}
