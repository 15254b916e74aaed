//! Every checker diagnostic has a small broken spec in `tests/specs/bad/`;
//! each test asserts the exact message and position.

use std::path::PathBuf;

fn first_error(name: &str) -> lathe_isa::Diagnostic {
    let path: PathBuf = [env!("CARGO_MANIFEST_DIR"), "tests", "specs", "bad", name]
        .iter()
        .collect();
    match lathe_isa::load(&path) {
        Ok(_) => panic!("{name} should be rejected"),
        Err(d) => d.first().cloned().expect("at least one diagnostic"),
    }
}

fn expect(name: &str, line: usize, col: usize, message: &str) {
    let mut d = first_error(name);
    // Messages that cite another place name its file by full path.
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/specs/bad/");
    d.message = d.message.replace(dir, "");
    assert_eq!(
        (d.line, d.col, d.message.as_str()),
        (line, col, message),
        "{name}"
    );
    // The rendering names the file and position and puts the caret under the column.
    let text = d.to_string().replace(dir, "");
    let head = text.lines().next().unwrap_or_default();
    assert!(
        head.ends_with(&format!("{name}:{line}:{col}: error: {message}")),
        "{head}"
    );
    let caret = text.lines().last().unwrap_or_default();
    let bar = caret.find('|').expect("gutter");
    assert_eq!(caret[bar + 2..].find('^'), Some(col - 1), "{text}");
}

#[test]
fn syntax_error_points_at_missing_colon() {
    expect("syntax.isa", 6, 19, "expected `:`, found `uint`");
}

#[test]
fn unknown_type() {
    expect("unknown_type.isa", 7, 21, "unknown type `word`");
}

#[test]
fn uncovered_bits() {
    expect(
        "uncovered.isa",
        5,
        10,
        "bits 4..=7 of `i` are not covered by any field, pattern or assert",
    );
}

#[test]
fn overlapping_fields() {
    expect(
        "overlap.isa",
        8,
        11,
        "field `B` overlaps field `A` (bits 4) in `i`",
    );
}

#[test]
fn field_overlapping_pattern() {
    expect(
        "pattern_overlap.isa",
        7,
        11,
        "field `A` overlaps pattern bits 3..=4 in `i`",
    );
}

#[test]
fn two_encodings_match_one_word() {
    expect(
        "conflict.isa",
        10,
        10,
        "`b` and `a` (conflict.isa:9) can match the same word at generations all (declare `overlaps a` if this is intended)",
    );
}

#[test]
fn overlap_declaration_must_be_needed() {
    expect(
        "unneeded_overlap.isa",
        10,
        51,
        "`overlaps a` is not needed: no leaf of `b` can match the same word as a leaf of `a` in a common generation",
    );
}

#[test]
fn overlap_is_not_an_override() {
    expect(
        "overlap_in_when.isa",
        12,
        23,
        "`overlaps` is not allowed inside `when`: overrides never take part in matching",
    );
}

#[test]
fn template_names_unknown_field() {
    expect("unknown_field.isa", 6, 21, "unknown field `B` (in `i`)");
}

#[test]
fn expression_names_unknown_field() {
    expect("unknown_expr_name.isa", 7, 38, "unknown field `C` (in `i`)");
}

#[test]
fn template_cannot_be_read_back() {
    expect(
        "ambiguous.isa",
        6,
        17,
        "`{A}` and `{B}` are adjacent numbers: the text cannot be split back unambiguously",
    );
}

#[test]
fn unknown_parent() {
    expect("unknown_parent.isa", 9, 14, "unknown encoding `k`");
}

#[test]
fn pattern_digits_must_match_width() {
    expect(
        "bad_pattern_width.isa",
        8,
        21,
        "pattern has 3 digits but the bit range is 4 bits wide",
    );
}

#[test]
fn unbound_param() {
    expect("unbound_param.isa", 12, 21, "param `H` of `r` is not bound");
}

#[test]
fn duplicate_encoding() {
    expect(
        "duplicate.isa",
        9,
        10,
        "encoding `i` is declared twice (first at duplicate.isa:5)",
    );
}

#[test]
fn unknown_named_expression() {
    expect(
        "unknown_named_expr.isa",
        7,
        24,
        "unknown expression `@missing`",
    );
}

#[test]
fn unknown_latency_class() {
    expect("unknown_class.isa", 7, 12, "unknown latency class `mem`");
}

#[test]
fn expression_function_arity() {
    expect(
        "expr_arity.isa",
        9,
        11,
        "`@even` takes 1 argument(s) but is given 2",
    );
}

#[test]
fn unknown_register_file_kind() {
    expect(
        "regfile_kind.isa",
        6,
        10,
        "unknown register file kind `vector` (one of: gpr, predicate, address, uniform, const)",
    );
}

#[test]
fn register_file_latency_names_a_class_and_precision_rules_no_operand() {
    expect(
        "latency_precision.isa",
        7,
        15,
        "a `precision` rule names no operand",
    );
    expect(
        "regfile_latency.isa",
        14,
        13,
        "unknown latency class `addr`",
    );
}

#[test]
fn occupancy_reads_only_regs() {
    expect(
        "regfile_occupancy.isa",
        9,
        26,
        "an occupancy expression knows only `REGS` and `gen`, not `WAVES`",
    );
}

#[test]
fn inside_names_a_register_file() {
    expect("regfile_inside.isa", 9, 12, "unknown register file `f`");
}

#[test]
fn regfile_metadata_names_a_register_file() {
    expect("regfile_meta.isa", 14, 20, "unknown register file `q`");
}

#[test]
fn semantics_reading_an_unknown_operand() {
    expect(
        "sem_unknown_operand.isa",
        28,
        36,
        "unknown operand `B` (no such field in `add`)",
    );
}

#[test]
fn semantics_writing_nothing() {
    expect(
        "sem_writes_nothing.isa",
        28,
        1,
        "the semantics of `add` write nothing (no operand write and no `do` effect)",
    );
}

#[test]
fn semantics_mixing_types() {
    expect(
        "sem_mixed_types.isa",
        28,
        36,
        "mixed types in `fadd`: f32 and f16",
    );
}

#[test]
fn semantics_reading_a_plain_field_as_an_operand() {
    expect(
        "sem_not_operand.isa",
        28,
        21,
        "`W` is no operand (not a sub-encoding field)",
    );
}

#[test]
fn semantics_mixing_lane_types() {
    expect(
        "sem_lane_types.isa",
        28,
        49,
        "`fadd` wants a float, this is u16 (u16)",
    );
}

#[test]
fn semantics_comparing_vectors() {
    expect(
        "sem_vector_compare.isa",
        28,
        25,
        "`compare` compares scalars: compare vector lanes with `lane(v, [K])`",
    );
}

#[test]
fn semantics_converting_a_vector_to_a_scalar() {
    expect(
        "sem_lanewise_cvt.isa",
        28,
        21,
        "`cvt` converts lane by lane: v2f16 and f32 have different lanes (use `bitcast` for the bits)",
    );
}

#[test]
fn semantics_immt_of_a_field_that_is_no_enum() {
    expect(
        "sem_immt_not_enum.isa",
        29,
        22,
        "`immt N`: not a field of enum type",
    );
}

#[test]
fn semantics_shuffling_a_value_that_is_no_operand_read() {
    expect(
        "sem_shuffle_not_operand.isa",
        28,
        29,
        "`shuffle` reads an operand: `A as T`",
    );
}

#[test]
fn semantics_goto_on_an_integer() {
    expect(
        "sem_goto_not_bool.isa",
        28,
        25,
        "`goto` wants a bool here, this is u32",
    );
}

#[test]
fn io_effects_take_known_keywords_operand_groups_and_integer_values() {
    expect(
        "sem_io_keyword.isa",
        28,
        25,
        "argument 1 of `load`: `heap` is none of global, shared, private, constant, image",
    );
    expect(
        "sem_io_group.isa",
        28,
        34,
        "`W` is no operand (not a sub-encoding field)",
    );
    expect(
        "sem_io_value.isa",
        28,
        51,
        "argument 5 of `load` is a scalar integer, this is f32",
    );
}

#[test]
fn an_idiom_that_does_not_assemble() {
    expect(
        "idiom.isa",
        12,
        17,
        "idiom `exchange` does not assemble at v1: column 1: expected `add r`, found `swap`",
    );
}

#[test]
fn an_idiom_outside_every_generation() {
    expect(
        "idiom_gen.isa",
        10,
        13,
        "idiom `later` covers no declared generation",
    );
}

#[test]
fn semantics_reading_a_member_of_no_operand() {
    expect(
        "sem_member_unknown.isa",
        28,
        24,
        "`Q[…]`: no register file and no operand of `add` has that name",
    );
}

#[test]
fn semantics_writing_a_member_at_an_unknown_index() {
    expect(
        "sem_member_index_unknown.isa",
        28,
        19,
        "unknown name `K` (no field, derived value or param of `add`)",
    );
}

#[test]
fn semantics_declaring_undocumented_without_saying_why() {
    expect(
        "sem_undocumented_without_doc.isa",
        28,
        1,
        "`add` is declared undocumented: say in a `///` comment what is known and why the behaviour is not",
    );
}

#[test]
fn semantics_undocumented_in_every_form_yet_computing() {
    expect(
        "sem_undocumented_yet_computes.isa",
        29,
        1,
        "`add` is declared undocumented in every form, yet its block computes: put `do undocumented();` under the `if` of the forms no source describes",
    );
}

#[test]
fn variant_metadata_is_checked_like_the_encodings() {
    expect(
        "when_meta.isa",
        11,
        21,
        "metadata key `pipe` is not declared in the `isa` block",
    );
}
