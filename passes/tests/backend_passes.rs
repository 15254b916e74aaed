//! The `group`, `depth` and `sched` passes on the test target: hand-written
//! cases with expected results worked out from the latency table, and
//! random programs whose interpreter results must not change.

use std::rc::Rc;

use lathe_ir::interp::{self, InterpError, Limits};
use lathe_ir::{Bump, GenericOp, Op, Shader, Value};
use lathe_passes::fuzzing::{GenLimits, generate, seed_bytes};
use lathe_passes::target::TargetFacts;
use lathe_passes::target::test_target::TestTarget;
use lathe_passes::{depth, group, sched};

fn parse<'a>(arena: &'a Bump, text: &str) -> Shader<'a, GenericOp> {
    lathe_ir::parse(arena, text).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn depths_follow_the_latency_table_and_meta_adds_none() {
    let arena = Bump::new();
    // alu_latency 3, async 10 on the test target: exp2 is asynchronous.
    let s = parse(
        &arena,
        "shader fragment
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = exp2 %0
  %2:f32 = fadd %1, %0
  %3:f32x2 = collect %2, %0
  %4:f32 = split lane=0 %3
  %5:f32 = fmul %4, %4
  store_output slot=0 comp=0 %5
  ret
",
    );
    let t = TestTarget::realistic();
    assert_eq!((t.alu_latency, t.async_latency), (3, 10));
    let d = depth::depths(&s, &t);
    let got: Vec<u32> = s
        .block_insts(s.entry().unwrap())
        .iter()
        .map(|&i| d.of(i))
        .collect();
    // load: 1; exp2: 1+3+1 = 5; fadd: exp2 is async, 5+10+1 = 16;
    // collect and split are meta: 16, 16; fmul: 16+3... the split passes
    // fadd's depth on with no latency of its own: 16+0+1 = 17;
    // store: 17+3+1 = 21; ret: 1.
    assert_eq!(got, [1, 5, 16, 16, 16, 17, 21, 1]);
}

/// Independent check that a grouping can be satisfied: every value sits in
/// at most one (group, lane), and no group holds a value twice.
fn assignment_exists(s: &Shader<'_, GenericOp>) -> bool {
    let mut place: Vec<Option<(Value, usize)>> = vec![None; s.value_capacity()];
    for (_, i) in s.insts_in_order() {
        let d = s.inst(i);
        let group: Vec<Value> = match d.op {
            Op::Collect => d.args.to_vec(),
            _ => continue,
        };
        let id = d.result.unwrap();
        for (lane, v) in group.iter().enumerate() {
            let def = &s.inst(s.value_def(*v)).op;
            if matches!(
                def,
                Op::Split { .. } | Op::Phi | Op::Input { .. } | Op::Collect
            ) {
                return false;
            }
            match place[v.index()] {
                Some(p) if p != (id, lane) => return false,
                _ => place[v.index()] = Some((id, lane)),
            }
        }
    }
    true
}

#[test]
fn group_copies_exactly_on_conflicts() {
    let arena = Bump::new();
    let text = "shader fragment
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = load_input slot=0 comp=1 interp=smooth
  %2:f32 = load_input slot=0 comp=2 interp=smooth
  %3:f32x2 = collect %0, %1
  %4:f32x4 = sample texture=0 sampler=0 %3
  %5:f32 = split lane=0 %4
  %6:f32 = split lane=1 %4
  %7:f32x2 = collect %2, %2
  %8:f32x2 = collect %5, %1
  %9:f32x4 = sample texture=0 sampler=0 %7
  %10:f32x4 = sample texture=0 sampler=0 %8
  %11:f32 = split lane=0 %9
  %12:f32 = split lane=0 %10
  %13:f32 = fadd %11, %12
  %14:f32 = fadd %13, %6
  store_output slot=0 comp=0 %14
  ret
";
    let mut s = parse(&arena, text);
    assert!(!assignment_exists(&s));
    let g = group::group(&mut s, &TestTarget::realistic());
    lathe_ir::validate(&s).unwrap();
    // Conflicts: %2 twice in one collect (one copy), %5 a split lane, %1 in
    // a second collect: three copies, and %0, %1 (first use), %2 (first
    // lane) stay.
    assert_eq!(g.copies, 3);
    assert!(assignment_exists(&s));
    // Neighbours: the first collect's operands, and the split lanes %5/%6.
    let v = |n: u32| {
        s.insts_in_order()
            .filter_map(|(_, i)| s.inst(i).result)
            .nth(n as usize)
            .unwrap()
    };
    assert_eq!(g.right(v(0)), Some(v(1)));
    assert_eq!(g.left(v(1)), Some(v(0)));
    assert_eq!(g.right(v(5)), Some(v(6)));
    // Grouping again finds nothing to copy.
    assert_eq!(group::group(&mut s, &TestTarget::realistic()).copies, 0);
}

#[test]
fn group_leaves_conflict_free_programs_alone() {
    let arena = Bump::new();
    let text = "shader fragment
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = load_input slot=0 comp=1 interp=smooth
  %2:f32x2 = collect %0, %1
  %3:f32x4 = sample texture=0 sampler=0 %2
  %4:f32 = split lane=0 %3
  store_output slot=0 comp=0 %4
  ret
";
    let mut s = parse(&arena, text);
    assert_eq!(group::group(&mut s, &TestTarget::realistic()).copies, 0);
    assert_eq!(lathe_ir::print(&s), text);
}

/// Maximum number of simultaneously live values in straight-line order
/// (an oracle written independently of the scheduler's own accounting).
fn max_live(s: &Shader<'_, GenericOp>) -> usize {
    let b = s.entry().unwrap();
    let order = s.block_insts(b);
    let last_use = |v: Value| {
        order
            .iter()
            .rposition(|&i| s.inst(i).operands().any(|w| w == v))
    };
    let mut live: Vec<Value> = Vec::new();
    let mut max = 0;
    for (k, &i) in order.iter().enumerate() {
        live.retain(|&v| last_use(v).is_some_and(|u| u > k));
        if let Some(r) = s.inst(i).result {
            if last_use(r).is_some_and(|u| u > k) {
                live.push(r);
            }
        }
        max = max.max(live.len());
    }
    max
}

#[test]
fn sched_lowers_pressure_when_loads_come_first() {
    let arena = Bump::new();
    // 64 loads, then each is squared and stored: 64 full values (128
    // units) live at once in program order; the realistic target's
    // occupancy steps every 16 units from 96 on, so fewer live values
    // would run more waves.
    let mut text = String::from("shader fragment\nb0:\n");
    let n = 64;
    for k in 0..n {
        text.push_str(&format!(
            "  %{k}:f32 = load_input slot={} comp={} interp=smooth\n",
            k / 4,
            k % 4
        ));
    }
    for k in 0..n {
        text.push_str(&format!("  %{}:f32 = fmul %{k}, %{k}\n", n + k));
        text.push_str(&format!(
            "  store_output slot={} comp={} %{}\n",
            k / 4,
            k % 4,
            n + k
        ));
    }
    text.push_str("  ret\n");
    let mut s = parse(&arena, &text);
    let before = max_live(&s);
    let t = TestTarget::realistic();
    assert!(
        t.occupancy_steps(lathe_passes::target::FileId(0))
            .iter()
            .any(|&u| u < 2 * before as u32)
    );
    let stats = sched::schedule(&mut s, &t);
    lathe_ir::validate(&s).unwrap();
    let after = max_live(&s);
    assert_eq!(stats.reordered, 1);
    println!("max live values: program order {before}, scheduled {after}");
    assert!(after < before, "max live {before} -> {after}");
}

#[test]
fn sched_counts_values_from_earlier_blocks_and_keeps_occupancy() {
    let arena = Bump::new();
    let t = TestTarget::realistic();
    // Values from the entry block live through b1 and take all but four
    // values' units below an occupancy step; b1 runs eight independent
    // three-multiply chains one after another (each stalls on the last).
    // Interleaving all eight would cross the step: the scheduler must
    // count the earlier block's values as it picks (the order is judged
    // with them), or every order it tries loses occupancy and the block
    // keeps its stalls.
    let step = t
        .occupancy_steps(lathe_passes::target::FileId(0))
        .into_iter()
        .find(|&s| s >= 100)
        .unwrap();
    let outside = (step - 8) / 2;
    let mut text = String::from("shader fragment\nb0:\n");
    for k in 0..outside {
        text += &format!(
            "  %{k}:f32 = load_input slot={} comp={} interp=smooth\n",
            k / 4,
            k % 4
        );
    }
    text += "  jump b1\nb1:\n";
    let mut next = outside;
    let mut live = Vec::new();
    for c in 0..8 {
        let (a, b) = (c % outside, (c + 1) % outside);
        text += &format!("  %{next}:f32 = fmul %{a}, %{b}\n");
        text += &format!("  %{}:f32 = fmul %{next}, %{next}\n", next + 1);
        text += &format!("  %{}:f32 = fmul %{}, %{}\n", next + 2, next + 1, next + 1);
        live.push(next + 2);
        next += 3;
    }
    for (c, v) in live.iter().enumerate() {
        text += &format!("  store_output slot={} comp={} %{v}\n", c / 4, c % 4);
    }
    // Keep every earlier value alive to the end.
    for k in 0..outside {
        text += &format!("  store_output slot={} comp={} %{k}\n", 8 + k / 4, k % 4);
    }
    text += "  ret\n";
    let mut s = parse(&arena, &text);
    let stats = sched::schedule(&mut s, &t);
    lathe_ir::validate(&s).unwrap();
    assert_eq!(stats.reordered, 1, "{}", lathe_ir::print(&s));
    // Kept within the occupancy level: the earlier block's values and
    // the most values of b1 live at once (an independent count).
    assert_eq!(stats.kept, 0);
    let b1 = s.layout()[1];
    let order = s.block_insts(b1);
    let last_use = |v: Value| {
        order
            .iter()
            .rposition(|&i| s.inst(i).operands().any(|w| w == v))
    };
    let mut live: Vec<Value> = Vec::new();
    let mut most = 0;
    for (k, &i) in order.iter().enumerate() {
        live.retain(|&v| last_use(v).is_some_and(|u| u > k));
        if let Some(r) = s.inst(i).result {
            live.push(r);
        }
        most = most.max(live.len() as u32);
    }
    assert!(2 * (outside + most) <= step, "{}", lathe_ir::print(&s));
}

#[test]
fn sched_keeps_preloaded_inputs_at_the_head() {
    let arena = Bump::new();
    // The second input comes after a long-latency chain it does not feed;
    // scheduling by depth alone would sink it, and ra would then see its
    // register free before it (the hardware preloads it at the start).
    let text = "shader fragment
b0:
  %0:f32 = input index=0
  %1:f32 = exp2 %0
  %2:f32 = exp2 %1
  %3:f32 = input index=1
  %4:f32 = fmul %3, %3
  %5:f32 = fadd %2, %4
  output index=0 %5
  ret
";
    let mut s = parse(&arena, text);
    sched::schedule(&mut s, &TestTarget::realistic());
    let b = s.entry().unwrap();
    let ops: Vec<bool> = s
        .block_insts(b)
        .iter()
        .map(|&i| matches!(s.inst(i).op, Op::Input { .. }))
        .collect();
    assert_eq!(&ops[..2], &[true, true], "{}", lathe_ir::print(&s));
    assert_eq!(ops.iter().filter(|&&x| x).count(), 2);
}

#[test]
fn sched_keeps_ordered_accesses_in_order() {
    let arena = Bump::new();
    let text = "shader fragment
array a0: f32[4]
b0:
  %0:f32 = load_input slot=0 comp=0 interp=smooth
  %1:f32 = fmul %0, %0
  array_store array=a0 offset=0 %1
  %2:f32 = array_load array=a0 offset=0
  %3:f32 = fadd %2, %0
  array_store array=a0 offset=0 %3
  %4:f32 = array_load array=a0 offset=0
  store_output slot=0 comp=0 %4
  ret
";
    let mut s = parse(&arena, text);
    let b = s.entry().unwrap();
    let deps_before = lathe_ir::ordering_deps(&s, b);
    sched::schedule(&mut s, &TestTarget::realistic());
    let pos = |i| s.block_insts(b).iter().position(|&x| x == i).unwrap();
    for (a, c) in deps_before {
        assert!(pos(a) < pos(c), "{a:?} must stay before {c:?}");
    }
}

#[test]
fn group_depth_sched_preserve_semantics_on_random_programs() {
    let registry = lathe_passes::Registry::with_target(
        Rc::new(TestTarget::realistic()) as Rc<dyn TargetFacts<GenericOp>>
    );
    let mut compared = 0;
    let mut reordered = 0;
    for seed in 0..300u64 {
        let bytes = seed_bytes(seed, 4096);
        let mut u = arbitrary::Unstructured::new(&bytes);
        let arena = Bump::new();
        let Ok(g) = generate(&arena, &mut u, GenLimits::default()) else {
            continue;
        };
        let mut s = g.shader;
        let limits = Limits {
            max_steps: 100_000,
            ..Limits::default()
        };
        let before = interp::run(&s, &g.invocation, limits);
        let text = lathe_ir::print(&s);
        let mut pm = registry.pipeline(&["group", "depth", "sched"]).unwrap();
        pm.verify = true;
        let records = pm.run(&mut s).unwrap_or_else(|e| panic!("{e}\n{text}"));
        reordered += usize::from(records.iter().any(|r| r.name == "sched" && r.changed));
        match before {
            Ok(expected) => {
                compared += 1;
                let after = interp::run(&s, &g.invocation, limits);
                assert_eq!(
                    after.as_ref(),
                    Ok(&expected),
                    "seed {seed}\n{text}\n{}",
                    lathe_ir::print(&s)
                );
            }
            Err(InterpError::Undefined { .. } | InterpError::StepLimit(_)) => {}
            Err(e) => panic!("seed {seed}: {e}"),
        }
    }
    println!("{compared} programs compared, {reordered} reordered");
    assert!(
        compared > 100 && reordered > 50,
        "{compared} compared, {reordered} reordered"
    );
}
