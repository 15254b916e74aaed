//! Every ir3 and Valhall instruction round-trips through the machine-IR
//! text form and passes the IR validator: for each instruction, at each
//! generation it exists in, words built field by field from the spec
//! become a `MachineOp`, a one-instruction shader around it prints, parses
//! back to the same opcode and text, and validates.

use std::sync::OnceLock;

use lathe_ir::{Opcode, Shader};
use lathe_isa::machine::{MachineOp, MachineSpec, MachineTable};
use lathe_isa::operands::Role;

macro_rules! spec {
    ($name:ident, $path:literal) => {
        struct $name;
        impl MachineSpec for $name {
            fn isa() -> &'static lathe_isa::Isa {
                static I: OnceLock<lathe_isa::Isa> = OnceLock::new();
                I.get_or_init(|| {
                    lathe_isa::load(concat!(env!("CARGO_MANIFEST_DIR"), "/specs/", $path))
                        .unwrap_or_else(|e| panic!("{e}"))
                })
            }
            fn table() -> &'static MachineTable {
                static T: OnceLock<MachineTable> = OnceLock::new();
                T.get_or_init(|| MachineTable::new(Self::isa()))
            }
        }
    };
}

spec!(Ir3, "adreno/ir3.isa");
spec!(Valhall, "mali/valhall.isa");

/// A shader computing `op` from fresh inputs.
fn shader_text<S: MachineSpec>(op: MachineOp<S>) -> String {
    let mut t = String::from("shader fragment\nb0:\n");
    let sources = op.value_operands(Role::Src).count();
    for i in 0..sources {
        t.push_str(&format!("  %{i}:f32 = input index={i}\n"));
    }
    t.push_str("  ");
    match op.value_operands(Role::Dst).count() {
        0 => {}
        1 => t.push_str(&format!("%{sources}:f32 = ")),
        n => t.push_str(&format!("%{sources}:f32x{n} = ")),
    }
    t.push_str(op.name());
    let mut attrs = String::new();
    op.write_attrs(None, &mut attrs).unwrap();
    t.push_str(&attrs);
    let operands: Vec<String> = (0..sources).map(|i| format!("%{i}")).collect();
    if !operands.is_empty() {
        t.push(' ');
        t.push_str(&operands.join(", "));
    }
    t.push_str("\n  ret\n");
    t
}

/// (instructions covered, instances checked).
fn round_trip_all<S: MachineSpec>(generations: &[u32]) -> (usize, usize) {
    let isa = S::isa();
    let mut covered = 0;
    let mut checked = 0;
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for leaf in isa.instructions() {
        let mut any = false;
        for &g in generations {
            if !isa.encodings[leaf].generation.contains(g) {
                continue;
            }
            for _ in 0..4 {
                let mut pick = |max: u64| {
                    seed ^= seed << 13;
                    seed ^= seed >> 7;
                    seed ^= seed << 17;
                    if max == u64::MAX {
                        seed
                    } else {
                        seed % (max + 1)
                    }
                };
                let Some(word) = isa.build_word(leaf, g, &mut pick) else {
                    continue;
                };
                let op = MachineOp::<S>::from_word(word, g)
                    .unwrap_or_else(|| panic!("{word:#x} decodes at {g}"));
                assert_eq!(op.encoding(), leaf);
                let text = shader_text(op);
                let arena = lathe_ir::Bump::new();
                let shader: Shader<MachineOp<S>> = lathe_ir::parse(&arena, &text)
                    .unwrap_or_else(|e| panic!("{}:\n{text}\n{e}", isa.encodings[leaf].name));
                lathe_ir::validate(&shader).unwrap_or_else(|e| panic!("{text}\n{e:?}"));
                assert_eq!(lathe_ir::print(&shader), text);
                let parsed = shader
                    .insts_in_order()
                    .find_map(|(_, i)| match shader.inst(i).op {
                        lathe_ir::Op::Opcode(o) => Some(o),
                        _ => None,
                    })
                    .expect("the instruction");
                assert_eq!(parsed, op, "{text}");
                any = true;
                checked += 1;
            }
        }
        assert!(any, "no valid word for {}", isa.encodings[leaf].name);
        covered += 1;
    }
    (covered, checked)
}

#[test]
fn every_ir3_instruction_round_trips_through_machine_ir() {
    let (covered, checked) = round_trip_all::<Ir3>(&[300, 400, 500, 600, 700]);
    println!("ir3: {covered} instructions, {checked} words");
    assert_eq!(covered, Ir3::isa().instructions().count());
}

#[test]
fn every_valhall_instruction_round_trips_through_machine_ir() {
    let (covered, checked) = round_trip_all::<Valhall>(&[9, 10]);
    println!("valhall: {covered} instructions, {checked} words");
    assert_eq!(covered, Valhall::isa().instructions().count());
}

#[test]
fn bad_machine_ir_is_rejected_with_a_position() {
    let arena = lathe_ir::Bump::new();
    let bad = |line: &str| {
        let text = format!("shader fragment\nb0:\n  %0:f32 = input index=0\n{line}\n  ret\n");
        match lathe_ir::parse::<MachineOp<Ir3>>(&arena, &text) {
            Ok(s) => lathe_ir::validate(&s).err().map(|e| format!("{e:?}")),
            Err(e) => Some(e.to_string()),
        }
        .unwrap_or_else(|| panic!("accepted: {line}"))
    };
    assert!(bad("  %1:f32 = add.q %0, %0").contains("unknown instruction `add.q`"));
    assert!(
        bad("  %1:f32 = add.f wobble %0, %0").contains("`add.f` has no field or operand `wobble`")
    );
    assert!(bad("  %1:f32 = add.f %0").contains("takes 2 register operand(s) here, not 1"));
    assert!(bad("  %1:f32 = add.f repeat=9 %0, %0").contains("does not fit in `repeat`"));
}

#[test]
fn effects_come_from_the_spec() {
    let store = MachineOp::<Ir3>::named("stg").unwrap();
    assert!(store.effects().side_effects);
    assert!(
        store
            .effects()
            .barrier
            .intersects(lathe_ir::BarrierClass::BUFFER_W)
    );
    assert_eq!(
        MachineOp::<Ir3>::named("add.f").unwrap().effects(),
        lathe_ir::Effects::PURE
    );
    let blend = MachineOp::<Valhall>::named("BLEND").unwrap();
    assert!(
        blend
            .effects()
            .barrier
            .intersects(lathe_ir::BarrierClass::OUTPUT_W)
    );
    // Every effect name the specs use is one the vocabulary knows.
    for isa in [Ir3::isa(), Valhall::isa()] {
        for e in &isa.encodings {
            for (k, v, _) in &e.meta {
                if let (true, lathe_isa::ast::MetaValue::List(items)) = (k == "effects", v) {
                    for item in items {
                        assert!(
                            [
                                "side_effects",
                                "may_trap",
                                "array_r",
                                "array_w",
                                "buffer_r",
                                "buffer_w",
                                "output_w"
                            ]
                            .contains(&item.as_str()),
                            "{}: unknown effect {item}",
                            e.name
                        );
                    }
                }
            }
        }
    }
}
