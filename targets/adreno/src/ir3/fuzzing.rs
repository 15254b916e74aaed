//! Bodies of the cargo-fuzz targets in `fuzz/`, kept here so that
//! `cargo test` runs them on a fixed seed set too.
//!
//! Both return an error message instead of panicking so that tests can
//! report it; the fuzz targets panic on `Err` to record the input.

use arbitrary::{Arbitrary, Unstructured};

use super::generated::Instr;
use super::{Generation, assemble, disassemble, spec};

/// Any bytes: decoding never panics, and a word that disassembles
/// assembles back to a word with the same text (the assembler writes 0 in
/// don't-care bits, so the word itself may differ).
pub fn decode_body(data: &[u8]) -> Result<(), String> {
    spec().map_err(|e| e.to_string())?;
    for chunk in data.chunks(8) {
        let mut bytes = [0u8; 8];
        bytes[..chunk.len()].copy_from_slice(chunk);
        let word = u64::from_le_bytes(bytes);
        for generation in Generation::ALL {
            let Ok(text) = disassemble(word, generation) else {
                continue;
            };
            let again = assemble(&text, generation).map_err(|e| {
                format!("0x{word:016x} on {generation}: `{text}` does not assemble: {e}")
            })?;
            let text_again = disassemble(again, generation)
                .map_err(|e| format!("0x{again:016x} (from `{text}`) does not decode: {e}"))?;
            if text_again != text {
                return Err(format!(
                    "0x{word:016x} on {generation}: `{text}` → 0x{again:016x} → `{text_again}`"
                ));
            }
        }
    }
    Ok(())
}

/// Arbitrary instructions (built field by field by the generated
/// `Arbitrary`) through encode/decode and text: `decode(encode(i)) == i`,
/// the text assembles to a word with the same text, and that word is a
/// fixed point (assembling its text gives it again).
pub fn roundtrip_body(data: &[u8]) -> Result<(), String> {
    spec().map_err(|e| e.to_string())?;
    let mut u = Unstructured::new(data);
    // Unstructured keeps yielding zeros once its data runs out: stop there.
    while !u.is_empty() {
        let Ok(instr) = Instr::arbitrary(&mut u) else {
            continue;
        };
        let (word, generation) = (instr.encode(), instr.generation);
        match Instr::decode(word, generation) {
            Some(back) if back == instr => {}
            // A word two overlapping leaves of Mesa's description share
            // (ldib.b/stib.b offsets) decodes as nothing, like in Mesa.
            None => continue,
            Some(back) => {
                return Err(format!(
                    "0x{word:016x} @{generation}: built as {:?}, decodes as {:?}",
                    instr.opcode, back.opcode
                ));
            }
        }
        let isa = spec().map_err(|e| e.to_string())?;
        let Ok(text) = isa.disassemble(word, generation) else {
            continue;
        };
        let canonical = isa
            .assemble(&text, generation)
            .map_err(|e| format!("0x{word:016x} @{generation}: `{text}` does not assemble: {e}"))?;
        let text_again = isa
            .disassemble(canonical, generation)
            .map_err(|e| format!("0x{canonical:016x} does not decode: {e}"))?;
        if text_again != text {
            return Err(format!("`{text}` → 0x{canonical:016x} → `{text_again}`"));
        }
        let fixed = isa
            .assemble(&text_again, generation)
            .map_err(|e| format!("`{text_again}` does not assemble: {e}"))?;
        if fixed != canonical {
            return Err(format!(
                "`{text}` assembles to 0x{canonical:016x} then 0x{fixed:016x}"
            ));
        }
    }
    Ok(())
}

/// Any bytes as a program (8 bytes per word, the first byte picks the
/// generation and seeds the registers): the simulator never panics;
/// decode errors, missing semantics, hazards and bad operands are errors
/// it returns.
pub fn sim_body(data: &[u8]) -> Result<(), String> {
    let Some((&first, rest)) = data.split_first() else {
        return Ok(());
    };
    let generation = Generation::ALL[first as usize % Generation::ALL.len()];
    let words: Vec<u64> = rest
        .chunks(8)
        .map(|c| {
            let mut b = [0u8; 8];
            b[..c.len()].copy_from_slice(c);
            u64::from_le_bytes(b)
        })
        .collect();
    let mut m = super::sim::machine(4);
    // I/O reaches a harness with memory, varyings and a texture.
    let mut io = lathe_isa::sim::Harness::default();
    io.write_bytes(lathe_isa::sim::Space::Global, 0, 0, rest);
    io.varyings = vec![[1.0, 2.0, 3.0]; 8];
    io.textures.push(lathe_isa::sim::Texture {
        width: 2,
        height: 2,
        texels: vec![[0.5; 4]; 4],
        ..Default::default()
    });
    m.set_io(Box::new(io));
    for (i, file) in m.files.iter().enumerate().collect::<Vec<_>>() {
        for index in 0..file.len() {
            for lane in 0..4 {
                let bits =
                    (index.wrapping_mul(0x9e37_79b9) ^ first as u32).rotate_left(lane as u32);
                m.set(i, false, index, lane, bits);
            }
        }
    }
    // Any outcome but a panic is fine; a step limit keeps loops short.
    let _ = super::generated::sim::run(&mut m, &words, generation.gpu_id(), 10_000);
    Ok(())
}

/// What one [`compile_body`] run did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CompileOutcome {
    /// The backend compiled the program (else it said `unsupported:`).
    pub compiled: bool,
    /// The compiled program was run and agreed with the interpreter
    /// (else every input draw was undefined behaviour).
    pub verified: bool,
}

/// Bytes as a random valid generic program
/// ([`lathe_passes::fuzzing::generate`], after the frontend's default
/// passes) through the whole ir3 backend for a630 or a740: no panic, an
/// error only `unsupported: …`, and where it compiles the simulator
/// agrees with the interpreter ([`lathe_ir::verify`], no hazard).
pub fn compile_body(data: &[u8]) -> Result<CompileOutcome, String> {
    use lathe_passes::fuzzing::{GenLimits, generate};
    use lathe_passes::manager::Registry;

    let mut u = Unstructured::new(data);
    let gpu: super::GpuModel = if u.arbitrary::<bool>().unwrap_or(false) {
        "a740"
    } else {
        "a630"
    }
    .parse()
    .map_err(|e: super::UnknownGpu| e.to_string())?;
    let seed = u.arbitrary::<u64>().unwrap_or(0);
    let arena = lathe_ir::Bump::new();
    // The same programs the Valhall target is fuzzed with: resources
    // (arrays, UBOs, textures, barriers, discards, derivatives, system
    // values) included, up to 400 instructions.
    let Ok(generated) = generate(&arena, &mut u, GenLimits::default()) else {
        return Ok(CompileOutcome::default());
    };
    let mut generic = generated.shader;
    // Compared bit for bit: the optimiser must keep signed zeros,
    // infinities and NaNs.
    generic.preserve_float_specials = true;
    let original = lathe_ir::print(&generic);
    Registry::<lathe_ir::GenericOp>::standard()
        .pipeline(&["flatten", "copy-prop", "dce"])
        .and_then(|mut p| p.run(&mut generic))
        .map_err(|e| format!("generic passes: {e}\n{original}"))?;
    let program = lathe_ir::print(&generic);
    let target = std::rc::Rc::new(super::target::Ir3Target::new(gpu).map_err(|e| e.to_string())?);
    let out = match super::compile::compile_with(&generic, &target, &Default::default()) {
        Ok(out) => out,
        Err(e) if e.to_string().starts_with("unsupported:") => {
            return Ok(CompileOutcome::default());
        }
        Err(e) => return Err(format!("{gpu}: {e}\n{program}")),
    };
    let exec = super::verify::Ir3Program::new(&out.compiled, &out.ports, gpu);
    let options = lathe_ir::verify::Options {
        seed,
        ..Default::default()
    };
    match lathe_ir::verify::verify(&generic, &exec, &options) {
        Ok(_) => Ok(CompileOutcome {
            compiled: true,
            verified: true,
        }),
        Err(lathe_ir::verify::VerifyError::Undefined { .. }) => Ok(CompileOutcome {
            compiled: true,
            verified: false,
        }),
        Err(e) => Err(format!("{gpu}: {e}\n{program}\n{}", out.compiled.asm)),
    }
}
