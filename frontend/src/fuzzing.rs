//! The body of the `spirv_lower` fuzz target, also run by `cargo test` on
//! fixed seeds: lowering any module never panics, and whatever it accepts
//! passes the IR validator.
//!
//! Input that starts with the SPIR-V magic number is lowered as it is (the
//! fuzzer mutates corpus modules); anything else drives [`arbitrary_module`],
//! which builds a well-formed module skeleton around a random function body.

use crate::{Error, Options, lower_spirv, spirv_words};
use arbitrary::{Result as ArbResult, Unstructured};
use rspirv::binary::Assemble;
use rspirv::dr::{Builder, Instruction, Operand};
use rspirv::grammar::{INSTRUCTION_TABLE, OperandKind, OperandQuantifier};
use rspirv::spirv::{self, Op};

/// Lower `data` (see the module docs); `Err` describes a real failure: a
/// lowering that produced invalid IR.
pub fn check(data: &[u8]) -> Result<(), String> {
    let words = if data.len() >= 4 && data[..4] == spirv::MAGIC_NUMBER.to_le_bytes() {
        let whole = data.len() / 4 * 4;
        match spirv_words(&data[..whole]) {
            Ok(w) => w,
            Err(_) => return Ok(()),
        }
    } else {
        match arbitrary_module(&mut Unstructured::new(data)) {
            Ok(w) => w,
            Err(_) => return Ok(()),
        }
    };
    check_words(&words)
}

/// Lower every entry point of `words` with and without passes.
pub fn check_words(words: &[u32]) -> Result<(), String> {
    for passes in [false, true] {
        let arena = lathe_ir::Bump::new();
        let opts = Options {
            passes,
            ..Options::default()
        };
        match lower_spirv(&arena, words, &opts) {
            Ok(lowered) => {
                lathe_ir::validate(&lowered.shader)
                    .map_err(|e| format!("accepted but invalid: {e}"))?;
            }
            Err(Error::Internal(e)) => return Err(e),
            Err(_) => {}
        }
    }
    Ok(())
}

/// Operand kinds the random body fills in.
fn simple_kind(kind: OperandKind) -> bool {
    matches!(
        kind,
        OperandKind::IdResultType
            | OperandKind::IdResult
            | OperandKind::IdRef
            | OperandKind::LiteralInteger
    )
}

/// A fragment shader module: fixed types, constants, an input and an
/// output, and a `main` of random blocks of random instructions.
pub fn arbitrary_module(u: &mut Unstructured<'_>) -> ArbResult<Vec<u32>> {
    let mut b = Builder::new();
    b.capability(spirv::Capability::Shader);
    let glsl = b.ext_inst_import("GLSL.std.450");
    b.memory_model(spirv::AddressingModel::Logical, spirv::MemoryModel::GLSL450);
    let void = b.type_void();
    let boolean = b.type_bool();
    let int = b.type_int(32, 1);
    let uint = b.type_int(32, 0);
    let float = b.type_float(32, None);
    let vec2 = b.type_vector(float, 2);
    let vec4 = b.type_vector(float, 4);
    let bvec4 = b.type_vector(boolean, 4);
    let mat4 = b.type_matrix(vec4, 4);
    let four = b.constant_bit32(uint, 4);
    let arr = b.type_array(float, four);
    let types = [boolean, int, uint, float, vec2, vec4, bvec4, mat4, arr];
    let ptr_in = b.type_pointer(None, spirv::StorageClass::Input, vec4);
    let ptr_out = b.type_pointer(None, spirv::StorageClass::Output, vec4);
    let ptr_fv = b.type_pointer(None, spirv::StorageClass::Function, vec4);
    let ptr_fa = b.type_pointer(None, spirv::StorageClass::Function, arr);
    let ptr_ff = b.type_pointer(None, spirv::StorageClass::Function, float);
    let fn_ty = b.type_function(void, []);
    let mut ids = vec![four];
    for ty in [int, uint, float] {
        for _ in 0..u.int_in_range(1..=3)? {
            let bits: u32 = u.arbitrary()?;
            ids.push(b.constant_bit32(ty, bits));
        }
    }
    ids.push(b.constant_true(boolean));
    ids.push(b.constant_false(boolean));
    let input = b.variable(ptr_in, None, spirv::StorageClass::Input, None);
    let output = b.variable(ptr_out, None, spirv::StorageClass::Output, None);
    b.decorate(
        input,
        spirv::Decoration::Location,
        [Operand::LiteralBit32(0)],
    );
    b.decorate(
        output,
        spirv::Decoration::Location,
        [Operand::LiteralBit32(0)],
    );
    ids.extend([input, output]);
    let main = b.id();
    b.entry_point(
        spirv::ExecutionModel::Fragment,
        main,
        "main",
        [input, output],
    );
    b.execution_mode(main, spirv::ExecutionMode::OriginUpperLeft, []);
    b.begin_function(void, Some(main), spirv::FunctionControl::NONE, fn_ty)
        .map_err(|_| arbitrary::Error::IncorrectFormat)?;
    let nblocks = u.int_in_range(1..=4)?;
    let labels: Vec<u32> = (0..nblocks).map(|_| b.id()).collect();
    let pool: Vec<_> = INSTRUCTION_TABLE
        .iter()
        .filter(|i| {
            i.operands.iter().all(|o| simple_kind(o.kind))
                && i.operands
                    .first()
                    .is_some_and(|o| o.kind == OperandKind::IdResultType)
        })
        .collect();
    for (k, &label) in labels.iter().enumerate() {
        b.begin_block(Some(label))
            .map_err(|_| arbitrary::Error::IncorrectFormat)?;
        if k == 0 {
            for ptr in [ptr_fv, ptr_fa, ptr_ff] {
                ids.push(b.variable(ptr, None, spirv::StorageClass::Function, None));
            }
        }
        for _ in 0..u.int_in_range(0..=12)? {
            let result_type = *u.choose(&types)?;
            let id = b.id();
            let inst = if u.ratio(1, 4)? {
                let n = u.int_in_range(1..=3)?;
                let mut ops = vec![
                    Operand::IdRef(glsl),
                    Operand::LiteralExtInstInteger(u.int_in_range(1..=81)?),
                ];
                for _ in 0..n {
                    ops.push(Operand::IdRef(*u.choose(&ids)?));
                }
                Instruction::new(Op::ExtInst, Some(result_type), Some(id), ops)
            } else {
                let class = *u.choose(&pool)?;
                let mut ops = Vec::new();
                for o in class.operands.iter().skip(2) {
                    let reps = match o.quantifier {
                        OperandQuantifier::One => 1,
                        OperandQuantifier::ZeroOrOne => u.int_in_range(0..=1)?,
                        OperandQuantifier::ZeroOrMore => u.int_in_range(0..=4)?,
                    };
                    for _ in 0..reps {
                        ops.push(match o.kind {
                            OperandKind::LiteralInteger => {
                                Operand::LiteralBit32(u.int_in_range(0..=5)?)
                            }
                            _ => Operand::IdRef(*u.choose(&ids)?),
                        });
                    }
                }
                Instruction::new(class.opcode, Some(result_type), Some(id), ops)
            };
            b.insert_into_block(rspirv::dr::InsertPoint::End, inst)
                .map_err(|_| arbitrary::Error::IncorrectFormat)?;
            ids.push(id);
        }
        // Stores into the output and locals keep the body live.
        if u.arbitrary()? {
            let v = *u.choose(&ids)?;
            let p = *u.choose(&[output, ids[ids.len().saturating_sub(1)]])?;
            b.store(p, v, None, [])
                .map_err(|_| arbitrary::Error::IncorrectFormat)?;
        }
        let later = &labels[k + 1..];
        match u.int_in_range(0..=2)? {
            1 if !later.is_empty() => {
                b.branch(*u.choose(later)?)
                    .map_err(|_| arbitrary::Error::IncorrectFormat)?;
            }
            2 if !later.is_empty() => {
                let c = *u.choose(&ids)?;
                let (t, f) = (*u.choose(&labels)?, *u.choose(later)?);
                b.branch_conditional(c, t, f, [])
                    .map_err(|_| arbitrary::Error::IncorrectFormat)?;
            }
            _ => b.ret().map_err(|_| arbitrary::Error::IncorrectFormat)?,
        }
    }
    b.end_function()
        .map_err(|_| arbitrary::Error::IncorrectFormat)?;
    Ok(b.module().assemble())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic pseudo-random bytes (SplitMix64).
    fn bytes(seed: u64, len: usize) -> Vec<u8> {
        let mut s = seed;
        (0..len)
            .map(|_| {
                s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
                let mut z = s;
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                (z ^ (z >> 31)) as u8
            })
            .collect()
    }

    #[test]
    fn arbitrary_modules_never_lower_to_invalid_ir() {
        let mut built = 0;
        for seed in 0..300 {
            let data = bytes(seed, 600);
            if arbitrary_module(&mut Unstructured::new(&data)).is_ok() {
                built += 1;
            }
            check(&data).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        }
        assert!(built > 200, "only {built} of 300 seeds built a module");
    }

    #[test]
    fn fuzz_finding_rspirv_string_past_the_end_is_a_parse_error() {
        let data = include_bytes!("../tests/spirv_lower_crash_rspirv_string.bin");
        check(data).unwrap();
    }

    /// Fuzz finding (run 1 of this session): an `OpTypeInt` whose word
    /// count runs past the end of the module made rspirv's string decoder
    /// slice out of bounds. The panic was caught, but libFuzzer aborts on
    /// any panic; the word counts are now checked before rspirv runs.
    #[test]
    fn fuzz_finding_word_count_past_the_end_is_rejected_before_rspirv() {
        let data = include_bytes!("../tests/spirv_lower_crash_word_count.bin");
        check(data).unwrap();
        let words = spirv_words(&data[..data.len() / 4 * 4]).unwrap();
        let arena = lathe_ir::Bump::new();
        match lower_spirv(&arena, &words, &Options::default()) {
            Err(Error::Parse(msg)) => assert!(msg.contains("runs past the end"), "{msg}"),
            Err(e) => panic!("expected a parse error, got {e}"),
            Ok(_) => panic!("a truncated module was accepted"),
        }
    }

    /// Fuzz finding (run 3 of the 2nd session): an access chain whose
    /// constant index is past the end of a local's array read SSA variables
    /// that do not exist (index out of bounds). Constant indices are now
    /// checked against the length.
    #[test]
    fn fuzz_finding_constant_index_out_of_range_is_invalid() {
        let data = include_bytes!("../tests/spirv_lower_crash_const_index.bin");
        check(data).unwrap();
        let words = spirv_words(&data[..data.len() / 4 * 4]).unwrap();
        let arena = lathe_ir::Bump::new();
        match lower_spirv(&arena, &words, &Options::default()) {
            Err(Error::Invalid { message, .. }) => {
                assert!(message.contains("out of range"), "{message}")
            }
            Err(e) => panic!("expected an invalid-SPIR-V error, got {e}"),
            Ok(_) => panic!("an out-of-range constant index was accepted"),
        }
    }

    /// Fuzz finding (run 4): an input array of 0-component vectors made the
    /// I/O walk divide by zero lanes per location. Vectors and matrices of
    /// fewer than 2 components are now rejected when the module is read.
    #[test]
    fn fuzz_finding_zero_component_vector_is_invalid() {
        let data = include_bytes!("../tests/spirv_lower_crash_zero_lane_vector.bin");
        check(data).unwrap();
        let words = spirv_words(&data[..data.len() / 4 * 4]).unwrap();
        let arena = lathe_ir::Bump::new();
        match lower_spirv(&arena, &words, &Options::default()) {
            Err(Error::Invalid { message, .. }) => {
                assert!(message.contains("components"), "{message}")
            }
            Err(e) => panic!("expected an invalid-SPIR-V error, got {e}"),
            Ok(_) => panic!("a 0-component vector was accepted"),
        }
    }

    /// Fuzz finding (session 5): an `OpPhi` whose parent operand was not a
    /// block of the function was skipped like an edge from an unreachable
    /// block, leaving the phi without a value on one incoming edge (the IR
    /// failed validation: "operand does not dominate this use"). A phi must
    /// now name each predecessor of its block exactly once.
    #[test]
    fn fuzz_finding_phi_parent_not_a_block_is_invalid() {
        let data = include_bytes!("../tests/spirv_lower_crash_phi_parent.bin");
        check(data).unwrap();
        let words = spirv_words(&data[..data.len() / 4 * 4]).unwrap();
        let arena = lathe_ir::Bump::new();
        match lower_spirv(&arena, &words, &Options::default()) {
            Err(Error::Invalid { message, .. }) => {
                assert!(message.contains("OpPhi"), "{message}")
            }
            Err(e) => panic!("expected an invalid-SPIR-V error, got {e}"),
            Ok(_) => panic!("a phi naming a non-block parent was accepted"),
        }
    }

    /// Fuzz finding (session 5): a composite built in a merge block from a
    /// value defined in only one arm of the selection (SPIR-V's dominance
    /// rule broken) was lowered faithfully into IR whose operand does not
    /// dominate its use. Dominance is now checked per function first.
    #[test]
    fn fuzz_finding_use_not_dominated_by_its_definition_is_invalid() {
        let data = include_bytes!("../tests/spirv_lower_crash_dominance.bin");
        check(data).unwrap();
        let words = spirv_words(&data[..data.len() / 4 * 4]).unwrap();
        let arena = lathe_ir::Bump::new();
        match lower_spirv(&arena, &words, &Options::default()) {
            Err(Error::Invalid { message, .. }) => {
                assert!(message.contains("does not dominate"), "{message}")
            }
            Err(e) => panic!("expected an invalid-SPIR-V error, got {e}"),
            Ok(_) => panic!("a use not dominated by its definition was accepted"),
        }
    }

    /// Fuzz finding (session 5): an `OpSpecConstantOp` wrapping an opcode
    /// with a context-dependent literal made rspirv's decoder panic. Such
    /// wrapped opcodes are now rejected before rspirv runs.
    #[test]
    fn fuzz_finding_spec_constant_op_with_contextual_operand_is_rejected() {
        let data = include_bytes!("../tests/spirv_lower_crash_spec_constant_op.bin");
        check(data).unwrap();
        let words = spirv_words(&data[..data.len() / 4 * 4]).unwrap();
        let arena = lathe_ir::Bump::new();
        match lower_spirv(&arena, &words, &Options::default()) {
            Err(Error::Parse(msg)) => assert!(msg.contains("OpSpecConstantOp"), "{msg}"),
            Err(e) => panic!("expected a parse error, got {e}"),
            Ok(_) => panic!("a malformed OpSpecConstantOp was accepted"),
        }
    }

    /// Fuzz finding (session 5): buffer Offset/ArrayStride decorations
    /// whose sum passes 2^32 overflowed the byte-offset arithmetic.
    #[test]
    fn fuzz_finding_buffer_offset_past_4_gib_is_invalid() {
        let data = include_bytes!("../tests/spirv_lower_crash_offset_overflow.bin");
        check(data).unwrap();
        let words = spirv_words(&data[..data.len() / 4 * 4]).unwrap();
        let arena = lathe_ir::Bump::new();
        match lower_spirv(&arena, &words, &Options::default()) {
            Err(Error::Invalid { message, .. }) => assert!(message.contains("4 GiB"), "{message}"),
            Err(e) => panic!("expected an invalid-SPIR-V error, got {e}"),
            Ok(_) => panic!("a buffer offset past 4 GiB was accepted"),
        }
        // The same run found the multiplication (element index times a
        // huge matrix stride) overflowing too.
        let data = include_bytes!("../tests/spirv_lower_crash_stride_overflow.bin");
        check(data).unwrap();
    }

    /// Fuzz finding (session 5): an `OpVectorShuffle` selecting more
    /// components than its result type has indexed past the result's
    /// leaf types. The count and each component's type are now checked.
    #[test]
    fn fuzz_finding_shuffle_with_too_many_components_is_invalid() {
        // Not a SPIR-V binary: the bytes drive `arbitrary_module`, whose
        // body held the malformed shuffle (it panicked before the check).
        let data = include_bytes!("../tests/spirv_lower_crash_shuffle_count.bin");
        check(data).unwrap();
    }

    /// Fuzz finding (session 5): block sizes and I/O locations computed
    /// from huge decorations overflowed 32-bit arithmetic (push-constant
    /// ranges in 64 bits now; locations saturate and fail the range check).
    #[test]
    fn fuzz_finding_interface_arithmetic_overflow_is_rejected() {
        let data = include_bytes!("../tests/spirv_lower_crash_io_overflow.bin");
        check(data).unwrap();
    }

    /// Fuzz finding (session 5): a conversion whose operand has more
    /// components than its result indexed past the result's leaf types.
    #[test]
    fn fuzz_finding_conversion_component_count_mismatch_is_rejected() {
        let data = include_bytes!("../tests/spirv_lower_crash_convert_count.bin");
        check(data).unwrap();
    }

    /// Fuzz finding (session 5): an `OpStore` of a value with more
    /// components than the pointer's type indexed past the output table.
    #[test]
    fn fuzz_finding_store_component_count_mismatch_is_rejected() {
        let data = include_bytes!("../tests/spirv_lower_crash_store_count.bin");
        check(data).unwrap();
    }

    /// Fuzz finding (session 6): a function used an id defined in another
    /// function's body (the dominance check skipped ids it did not find in
    /// the function's own blocks), giving IR whose operand dominates nothing.
    #[test]
    fn fuzz_finding_id_of_another_function_is_invalid() {
        let data = include_bytes!("../tests/spirv_lower_crash_other_function.bin");
        check(data).unwrap();
        let words = spirv_words(&data[..data.len() / 4 * 4]).unwrap();
        let arena = lathe_ir::Bump::new();
        match lower_spirv(&arena, &words, &Options::default()) {
            Err(Error::Invalid { message, .. }) => {
                assert!(message.contains("%54 is used where"), "{message}")
            }
            Err(e) => panic!("expected an invalid-SPIR-V error, got {e}"),
            Ok(_) => panic!("an id of another function was accepted"),
        }
    }

    /// Fuzz finding (session 6): an array whose element type is itself sent
    /// the scalarising walk over component types into unbounded recursion.
    #[test]
    fn fuzz_finding_type_containing_itself_is_invalid() {
        let data = include_bytes!("../tests/spirv_lower_crash_recursive_type.bin");
        check(data).unwrap();
        let words = spirv_words(&data[..data.len() / 4 * 4]).unwrap();
        let arena = lathe_ir::Bump::new();
        match lower_spirv(&arena, &words, &Options::default()) {
            Err(Error::Invalid { message, .. }) => {
                assert!(
                    message.contains("not a type declared before it"),
                    "{message}"
                )
            }
            Err(e) => panic!("expected an invalid-SPIR-V error, got {e}"),
            Ok(_) => panic!("a type containing itself was accepted"),
        }
    }

    #[test]
    fn truncated_and_garbage_binaries_are_rejected_cleanly() {
        let arena = lathe_ir::Bump::new();
        assert!(matches!(
            lower_spirv(&arena, &[], &Options::default()),
            Err(Error::Parse(_))
        ));
        let mut words = vec![spirv::MAGIC_NUMBER, 0x0001_0000, 0, 100, 0];
        words.extend([0xffff_0011, 7, 8]);
        assert!(lower_spirv(&arena, &words, &Options::default()).is_err());
    }
}
