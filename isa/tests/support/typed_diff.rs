//! The generated typed accessors (`Instr::get`/`set`, `Opcode::meta`,
//! `Instr::validate`) against the engine's field access over the spec
//! (the oracle), shared by the ir3 and Valhall tests, which include this
//! file with `#[path]` after importing their own generated items.

use super::{Field, Instr, Opcode, Value, display, isa};
use lathe_isa::ast::{MetaRef, MetaValue};
use lathe_isa::{FieldError, FieldInput};

/// Every `Field` of the instruction `word` decodes to: the same raw value,
/// width, kind, type and sub-encoding leaf as the engine reads, and
/// setting it to a changed value gives the same word or the same error.
/// Returns how many fields were compared.
pub fn fields_same(word: u64, generation: u32) -> usize {
    let Some(instr) = Instr::decode(word, generation) else {
        return 0;
    };
    let spec = isa();
    assert_eq!(
        instr.validate(),
        spec.validate(word, generation).map(|_| ()),
        "0x{word:016x}: validate"
    );
    let mut compared = 0;
    for f in Field::ALL {
        let name = f.name();
        let generated = display::field(word, generation, f as u16);
        let engine = spec.read_field(word, generation, name);
        let raw = match (generated, &engine) {
            (None, Err(FieldError::NoField { .. })) => None,
            (Some((info, v)), Ok(r)) => {
                let at = format!("0x{word:016x} at {generation}: `{name}`");
                assert_eq!(v as u64, r.raw, "{at}: value");
                assert_eq!(info.width, r.width, "{at}: width");
                assert_eq!(info.derived, r.derived, "{at}: derived");
                assert_eq!(info.describe, r.ty.describe(spec), "{at}: type");
                if let Some(Value::Sub(s)) = instr.get(f) {
                    let leaf = r.sub_leaf.map(|l| spec.encodings[l].name.as_str());
                    assert_eq!(s.leaf, leaf, "{at}: sub-encoding leaf");
                }
                compared += 1;
                Some(r.raw)
            }
            (g, e) => panic!("0x{word:016x}: `{name}`: generated {g:?}, engine {e:?}"),
        };
        // Flip the low bit (or set it on a field the word lacks).
        let bits = raw.map_or(1, |r| r ^ 1);
        let mut changed = instr;
        let g = changed.set(f, Value::Uint(bits)).map(|()| changed.encode());
        let e = spec
            .write_field(word, generation, name, FieldInput::Bits(bits))
            .and_then(|w| {
                if Opcode::decode(w, generation) == Some(instr.opcode) {
                    Ok(w)
                } else {
                    Err(FieldError::ChangesInstruction {
                        field: name.to_string(),
                    })
                }
            });
        assert_eq!(g, e, "0x{word:016x} at {generation}: set `{name}`");
    }
    compared
}

/// Every opcode's metadata, every key: the generated table equals the
/// engine's nearest definition or default. Returns how many values.
pub fn meta_same() -> usize {
    let spec = isa();
    let mut compared = 0;
    for op in Opcode::ALL {
        let enc = op.encoding();
        let mut keys: Vec<&str> = spec.meta_keys.iter().map(|k| k.name.as_str()).collect();
        keys.push("no-such-key");
        for key in keys {
            let engine = spec.meta(enc, key);
            let generated = op.meta(key);
            match (generated, engine) {
                (None, None) => {}
                (Some(MetaRef::Int(a)), Some(MetaValue::Int(b))) => assert_eq!(a, *b),
                (Some(MetaRef::Str(a)), Some(MetaValue::Str(b)))
                | (Some(MetaRef::Ident(a)), Some(MetaValue::Ident(b))) => assert_eq!(a, b),
                (Some(MetaRef::List(a)), Some(MetaValue::List(b))) => assert_eq!(a, b.as_slice()),
                (g, e) => panic!("{op:?} `{key}`: generated {g:?}, engine {e:?}"),
            }
            compared += usize::from(engine.is_some());
        }
    }
    compared
}
