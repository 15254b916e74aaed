//! Every operand of every ir3 and Valhall instruction has a register class
//! (or is an immediate) according to its spec, and every field that can
//! name a register is marked as an operand. Prints the coverage counts
//! (`cargo test -p lathe-isa --test operand_classes -- --nocapture`).

use lathe_isa::model::FieldType;
use lathe_isa::operands::OperandClass;

fn spec(path: &str) -> lathe_isa::Isa {
    lathe_isa::load(format!("{}/specs/{path}", env!("CARGO_MANIFEST_DIR")))
        .unwrap_or_else(|e| panic!("{e}"))
}

/// (instructions, operand fields, forms, forms with a class), and the gaps
/// found, each named `instruction.FIELD (form)`.
fn coverage(isa: &lathe_isa::Isa) -> ((usize, usize, usize, usize), Vec<String>) {
    let mut counts = (0, 0, 0, 0);
    let mut gaps = Vec::new();
    for leaf in isa.instructions() {
        counts.0 += 1;
        let ops = isa.operands(leaf);
        let name = &isa.encodings[leaf].name;
        for op in &ops {
            counts.1 += 1;
            for (form, class) in &op.forms {
                counts.2 += 1;
                match class.is_empty() {
                    false => counts.3 += 1,
                    true => gaps.push(format!(
                        "{name}.{} ({})",
                        op.field,
                        form.map_or("plain field", |f| isa.encodings[f].name.as_str())
                    )),
                }
            }
        }
        // A field whose operand tree can name a register must be an operand.
        for enc in isa.chain(leaf) {
            for f in &isa.encodings[enc].plain.fields {
                let FieldType::Sub(tree, _) = &f.ty else {
                    continue;
                };
                if ops.iter().any(|o| o.field == f.name) {
                    continue;
                }
                let names_register = isa
                    .leaves(*tree)
                    .chain(std::iter::once(*tree))
                    .any(|l| isa.meta(l, "regfile").is_some());
                if names_register {
                    gaps.push(format!("{name}.{} (register field without a role)", f.name));
                }
            }
        }
    }
    (counts, gaps)
}

fn check(path: &str) {
    let isa = spec(path);
    let ((insts, fields, forms, classed), gaps) = coverage(&isa);
    println!(
        "{path}: {insts} instructions, {fields} operand fields, {classed}/{forms} forms with a class"
    );
    assert!(
        gaps.is_empty(),
        "{} operand forms without a class in {path}:\n{}",
        gaps.len(),
        gaps.join("\n")
    );
    assert!(
        fields > insts,
        "{path}: too few operand fields ({fields}) for {insts} instructions"
    );
}

#[test]
fn every_ir3_operand_has_a_class() {
    check("adreno/ir3.isa");
}

#[test]
fn every_valhall_operand_has_a_class() {
    check("mali/valhall.isa");
}

#[test]
fn ir3_sources_accept_what_the_spec_says() {
    let isa = spec("adreno/ir3.isa");
    let gpr = isa.regfile("gpr").unwrap();
    let konst = isa.regfile("const").unwrap();
    let ops = isa.operands(isa.encoding("mad.f32").unwrap());
    let src = |n: &str| ops.iter().find(|o| o.field == n).unwrap();
    // cat3: src2 is a plain GPR, src1/src3 also take consts and relative forms.
    assert_eq!(src("SRC2").register_files(), [gpr]);
    assert!(src("SRC1").accepts_register(konst));
    assert!(src("SRC1").accepts_relative(gpr));
    assert!(!src("SRC2").accepts_relative(gpr));
    assert_eq!(
        src("DST").forms[0].1,
        [OperandClass::Register {
            file: gpr,
            relative: false
        }]
    );
}

#[test]
fn register_files_and_occupancy_come_from_the_specs() {
    let ir3 = spec("adreno/ir3.isa");
    let gpr = ir3.regfile("gpr").unwrap();
    let hgpr = ir3.regfile("hgpr").unwrap();
    let f = &ir3.regfiles[gpr];
    assert_eq!((f.unit, f.count(600)), (32, Some(192)));
    // Merged half/full registers from a6xx on only.
    assert_eq!(ir3.regfiles[hgpr].inside(500), None);
    assert_eq!(ir3.regfiles[hgpr].inside(600), Some(gpr));
    // Mesa's formula by hand: 96 vec4 / 12 vec4 used * 2 = 16 waves on a6xx,
    // 96 / 48 * 2 = 4 with the whole file; a5xx has 48 vec4: 48 / 48 * 2 = 2.
    assert_eq!(ir3.occupancy(gpr, 48, 600), Some(16));
    assert_eq!(ir3.occupancy(gpr, 192, 600), Some(4));
    assert_eq!(ir3.occupancy(gpr, 192, 500), Some(2));
    assert_eq!(ir3.occupancy(gpr, 0, 600), Some(16));
    let p0 = &ir3.regfiles[ir3.regfile("p0").unwrap()];
    assert_eq!((p0.count(500), p0.count(700)), (Some(1), Some(4)));

    let valhall = spec("mali/valhall.isa");
    let gpr = valhall.regfile("gpr").unwrap();
    assert_eq!(valhall.regfiles[gpr].count(10), Some(64));
    assert_eq!(valhall.occupancy(gpr, 32, 10), Some(2));
    assert_eq!(valhall.occupancy(gpr, 33, 10), Some(1));
}
