//! A program decoded once for a generated simulator: each instruction word
//! becomes a [`Step`] (the generated function that executes it and its
//! operands, decoded and with their modifiers applied), and the spec's
//! latency table becomes a flat [`Latencies`] array for the generation,
//! so executing an instruction neither decodes it nor evaluates latency
//! rules. Re-exported from [`crate::sim`]; `isa!` generates `prepare`,
//! which builds a [`Program`] from words.

use std::sync::Mutex;

use crate::sim::{FileInfo, Layout, Machine, Operand, Place, SimError};

/// The generated function that executes one decoded instruction at its
/// index for the machine's active lanes.
pub type Exec = fn(&mut Machine, &Program, &Step, usize) -> Result<(), SimError>;

/// What decoding one instruction word gives besides its operands: the
/// function that executes it and the timing facts its fields fix.
#[derive(Clone, Copy, Debug)]
pub struct Decoded {
    pub exec: Exec,
    /// Sync kinds it waits for before it issues: bit `k - 1` for kind `k`.
    pub waits: u64,
    /// Sync kind its results stay pending on (0: none).
    pub sync: u8,
    /// Repetitions after the first issue (`(rptN)`).
    pub reps: u32,
    /// Extra cycles after it issues (`(nopN)`, stalls).
    pub stall: u64,
}

/// One decoded instruction.
#[derive(Clone, Copy, Debug)]
pub struct Step {
    pub exec: Exec,
    /// The instruction word (static fields are read from it as they are
    /// needed: bit extractions).
    pub word: u64,
    /// Its operands start here in [`Program::operands`].
    pub first: usize,
    /// See [`Decoded`].
    pub waits: u64,
    pub sync: u8,
    pub reps: u32,
    pub stall: u64,
}

/// Producer-to-consumer latencies of one generation as a table: entry
/// `((consumer * keys + key) * classes + producer) * 2 + switched`, where
/// `key` numbers the operand names the spec's latency rules mention (the
/// last key: any other operand), `u32::MAX` where no rule applies.
#[derive(Clone, Debug, Default)]
pub struct Latencies {
    classes: usize,
    keys: usize,
    cycles: Vec<u32>,
    /// Per reader (`consumer * keys + key`): the most cycles any producer
    /// needs.
    longest: Vec<u32>,
}

impl Latencies {
    /// The table of `needed(consumer, key, producer, switched)` over
    /// `classes` latency classes and `keys` operand keys.
    pub fn new(
        classes: usize,
        keys: usize,
        needed: impl Fn(u16, usize, u16, bool) -> Option<u32>,
    ) -> Latencies {
        let mut cycles = Vec::with_capacity(classes * keys * classes * 2);
        for consumer in 0..classes {
            for key in 0..keys {
                for producer in 0..classes {
                    for switched in [false, true] {
                        let n = needed(consumer as u16, key, producer as u16, switched);
                        cycles.push(n.unwrap_or(u32::MAX));
                    }
                }
            }
        }
        let longest = cycles
            .chunks(classes.max(1) * 2)
            .map(|row| {
                row.iter()
                    .filter(|&&n| n != u32::MAX)
                    .max()
                    .copied()
                    .unwrap_or(0)
            })
            .collect();
        Latencies {
            classes,
            keys,
            cycles,
            longest,
        }
    }

    /// The table of `generation` from `cache`, built by `build` the first
    /// time (a one-instruction program is prepared for every instruction
    /// some callers run; the cache keeps a few generations).
    pub fn cached(
        cache: &Mutex<Vec<(u32, Latencies)>>,
        generation: u32,
        build: impl FnOnce() -> Latencies,
    ) -> Latencies {
        let mut tables = cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, t)) = tables.iter().find(|(g, _)| *g == generation) {
            return t.clone();
        }
        let t = build();
        if tables.len() < 16 {
            tables.push((generation, t.clone()));
        }
        t
    }

    /// The most slots a reader of class `consumer` (operand key `key`)
    /// waits after any producer (0: none).
    #[inline]
    pub fn longest(&self, consumer: u16, key: usize) -> u32 {
        let c = consumer as usize;
        if c >= self.classes || key >= self.keys {
            return 0;
        }
        self.longest[c * self.keys + key]
    }

    /// Slots a reader of class `consumer` (operand key `key`) waits after
    /// a producer of class `producer`; None when no rule applies or the
    /// producer has no class.
    #[inline]
    pub fn get(&self, consumer: u16, key: usize, producer: u16, switched: bool) -> Option<u32> {
        let (c, p) = (consumer as usize, producer as usize);
        if c >= self.classes || p >= self.classes || key >= self.keys {
            return None;
        }
        let n = self.cycles[((c * self.keys + key) * self.classes + p) * 2 + switched as usize];
        (n != u32::MAX).then_some(n)
    }
}

/// A decoded program: one step per word (or the error executing that word
/// reports: it does not decode, has no semantics, or an operand does not
/// decode), the operands of all steps with their places at repetition 0,
/// and the generation's latencies.
#[derive(Clone, Debug)]
pub struct Program {
    pub generation: u32,
    /// The register files the operands name: a machine over other files
    /// cannot run the program.
    files: &'static [FileInfo],
    steps: Vec<Result<Step, SimError>>,
    operands: Vec<Operand>,
    places: Vec<Place>,
    pub latencies: Latencies,
}

impl Program {
    /// Decodes `words` with `prepare(word, generation, pc, operands)`,
    /// which appends the instruction's operands and returns its exec
    /// function and timing facts.
    pub fn new(
        words: &[u64],
        generation: u32,
        files: &'static [FileInfo],
        latencies: Latencies,
        prepare: impl Fn(u64, u32, usize, &mut Vec<Operand>) -> Result<Decoded, SimError>,
    ) -> Program {
        let mut operands = Vec::new();
        let steps = words
            .iter()
            .enumerate()
            .map(|(pc, &word)| {
                let first = operands.len();
                let step = prepare(word, generation, pc, &mut operands);
                if step.is_err() {
                    operands.truncate(first);
                }
                step.map(|d| Step {
                    exec: d.exec,
                    word,
                    first,
                    waits: d.waits,
                    sync: d.sync,
                    reps: d.reps,
                    stall: d.stall,
                })
            })
            .collect();
        let layout = Layout::new(files);
        let places = operands.iter().map(|o| layout.place(files, o, 0)).collect();
        Program {
            generation,
            files,
            steps,
            operands,
            places,
            latencies,
        }
    }

    /// Instructions in the program.
    pub fn len(&self) -> usize {
        self.steps.len()
    }

    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// The `N` operands of `step`, in the order its exec function declares
    /// them, and their places at repetition 0.
    #[inline]
    pub fn operands<const N: usize>(&self, step: &Step) -> (&[Operand; N], &[Place; N]) {
        let at = step.first..step.first + N;
        let ops = self.operands[at.clone()].try_into();
        let places = self.places[at].try_into();
        (
            ops.expect("a step's operands are decoded with it"),
            places.expect("a step's places are decoded with it"),
        )
    }

    /// Runs from index 0 until every lane stops (`end`, a kill, or running
    /// off the end), at most `max_steps` issues.
    pub fn run(&self, m: &mut Machine, max_steps: u64) -> Result<(), SimError> {
        if !std::ptr::eq(m.files, self.files) {
            return Err(SimError::Flow(
                "the program was decoded for another machine's register files".into(),
            ));
        }
        let mut steps = 0u64;
        while let Some(pc) = m.schedule() {
            // While every running lane is active and no instruction sends
            // one elsewhere, they all go on to the next instruction
            // together: no need to schedule again (the lanes' `pc` is
            // brought up to date when that ends).
            let converged = m.converged(pc);
            let mut at = pc;
            let stop = loop {
                let Some(step) = self.steps.get(at) else {
                    break Stop::OffTheEnd;
                };
                if steps >= max_steps {
                    break Stop::Failed(SimError::Flow(format!(
                        "stopped after {max_steps} instructions"
                    )));
                }
                let issued = match step {
                    Ok(s) => (s.exec)(m, self, s, at),
                    Err(e) => Err(e.clone()),
                };
                if let Err(e) = issued {
                    break Stop::Failed(e);
                }
                steps += 1;
                match at.checked_add(1) {
                    Some(next) if converged && !m.redirected() => at = next,
                    _ => {
                        m.advance(at);
                        break Stop::Advanced;
                    }
                }
            };
            match stop {
                Stop::Advanced => {}
                Stop::OffTheEnd => m.place_active(None),
                Stop::Failed(e) => {
                    m.place_active(Some(at));
                    return Err(e);
                }
            }
        }
        Ok(())
    }
}

/// Why [`Program::run`] left its run of converged instructions.
enum Stop {
    /// The lanes moved on as the last instruction said: schedule again.
    Advanced,
    /// The active lanes are past the last instruction.
    OffTheEnd,
    Failed(SimError),
}
