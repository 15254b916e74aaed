//! A program decoded once for a generated simulator: each instruction word
//! becomes a [`Step`] (the generated function that executes it and its
//! operands, decoded and with their modifiers applied), and the spec's
//! latency table becomes a flat [`Latencies`] array for the generation,
//! so executing an instruction neither decodes it nor evaluates latency
//! rules. Re-exported from [`crate::sim`]; `isa!` generates `prepare`,
//! which builds a [`Program`] from words.

use std::sync::Mutex;

use crate::sim::{Machine, Operand, SimError};

/// The generated function that executes one decoded instruction at its
/// index for the machine's active lanes.
pub type Exec = fn(&mut Machine, &Program, &Step, usize) -> Result<(), SimError>;

/// One decoded instruction.
#[derive(Clone, Copy, Debug)]
pub struct Step {
    pub exec: Exec,
    /// The instruction word (static fields are read from it as they are
    /// needed: bit extractions).
    pub word: u64,
    /// Its operands start here in [`Program::operands`].
    pub first: usize,
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
        Latencies {
            classes,
            keys,
            cycles,
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
/// decode), the operands of all steps, and the generation's latencies.
#[derive(Clone, Debug)]
pub struct Program {
    pub generation: u32,
    steps: Vec<Result<Step, SimError>>,
    operands: Vec<Operand>,
    pub latencies: Latencies,
}

impl Program {
    /// Decodes `words` with `prepare(word, generation, pc, operands)`,
    /// which appends the instruction's operands and returns its exec
    /// function.
    pub fn new(
        words: &[u64],
        generation: u32,
        latencies: Latencies,
        prepare: impl Fn(u64, u32, usize, &mut Vec<Operand>) -> Result<Exec, SimError>,
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
                step.map(|exec| Step { exec, word, first })
            })
            .collect();
        Program {
            generation,
            steps,
            operands,
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

    /// The operands of `step`, in the order its exec function declares
    /// them.
    #[inline]
    pub fn operands(&self, step: &Step) -> &[Operand] {
        &self.operands[step.first..]
    }

    /// Runs from index 0 until every lane stops (`end`, a kill, or running
    /// off the end), at most `max_steps` issues.
    pub fn run(&self, m: &mut Machine, max_steps: u64) -> Result<(), SimError> {
        let mut steps = 0u64;
        while let Some(pc) = m.schedule() {
            let Some(step) = self.steps.get(pc) else {
                for l in 0..m.lanes {
                    if m.active[l] {
                        m.pc[l] = None;
                    }
                }
                continue;
            };
            if steps >= max_steps {
                return Err(SimError::Flow(format!(
                    "stopped after {max_steps} instructions"
                )));
            }
            match step {
                Ok(s) => (s.exec)(m, self, s, pc)?,
                Err(e) => return Err(e.clone()),
            }
            m.advance();
            steps += 1;
        }
        Ok(())
    }
}
