//! Variant sets: one compiled shader variant per shader key.
//!
//! A shader is compiled into variants specialised on a shader key (in ir3
//! terms, `ir3_shader` owns variants generated on demand from an
//! `ir3_shader_key`: two-sided colour, binning-pass vertex shader, and so
//! on). [`Variants`] is that set for any key type: the first lookup of a
//! key compiles, later lookups return the same variant, and concurrent
//! first lookups of one key compile it once while the others wait.
//!
//! Unlike the routine cache, a variant set never evicts: a shader has few
//! variants and a driver must keep returning the same one for a key.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Arc;

use crate::compiler::Compiler;
use crate::error::{LookupError, Poisoned};
use crate::hash::FxBuildHasher;
use crate::once::CompileOnce;
use crate::stats::{Counters, VariantStats};

type Table<K, C> = CompileOnce<
    K,
    <C as Compiler<K>>::Output,
    <C as Compiler<K>>::Error,
    HashMap<K, Arc<<C as Compiler<K>>::Output>, FxBuildHasher>,
>;

/// The compiled variants of one shader, keyed by shader key.
///
/// ```
/// use lathe_variants::Variants;
///
/// #[derive(Clone, PartialEq, Eq, Hash)]
/// struct ShaderKey { two_sided: bool, binning_pass: bool }
///
/// // The compile step is injected; it would run the backend for this key.
/// let variants = Variants::new(|key: &ShaderKey| {
///     Ok::<_, std::fmt::Error>(vec![u32::from(key.two_sided), u32::from(key.binning_pass)])
/// });
/// let key = ShaderKey { two_sided: true, binning_pass: false };
/// let first = variants.get(&key)?;
/// let again = variants.get(&key)?;
/// assert!(std::sync::Arc::ptr_eq(&first, &again)); // the same variant
/// assert_eq!(variants.stats().compilations, 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Variants<K, C: Compiler<K>> {
    compiler: C,
    table: Table<K, C>,
    counters: Counters,
}

impl<K, C> std::fmt::Debug for Variants<K, C>
where
    C: Compiler<K>,
{
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Variants").finish_non_exhaustive()
    }
}

impl<K, C> Variants<K, C>
where
    K: Hash + Eq + Clone,
    C: Compiler<K>,
{
    /// An empty set that compiles variants with `compiler`.
    pub fn new(compiler: C) -> Self {
        Self {
            compiler,
            table: CompileOnce::new(HashMap::default()),
            counters: Counters::new(),
        }
    }

    /// The variant for `key`, compiled on first use.
    ///
    /// If compilation fails, nothing is stored: this call and every call
    /// that was waiting for the same compilation get the error, and the
    /// next call compiles again.
    pub fn get(&self, key: &K) -> Result<Arc<C::Output>, LookupError<C::Error>> {
        self.table
            .get_or_compile(key, |key| self.compiler.compile(key), &self.counters)
            .map(|(variant, _)| variant)
    }

    /// Whether the variant for `key` has been compiled.
    pub fn contains(&self, key: &K) -> Result<bool, Poisoned> {
        self.table.holds(key)
    }

    /// How many variants have been compiled.
    pub fn len(&self) -> Result<usize, Poisoned> {
        self.table.count()
    }

    /// Whether no variant has been compiled.
    pub fn is_empty(&self) -> Result<bool, Poisoned> {
        Ok(self.len()? == 0)
    }

    /// The injected compiler.
    pub fn compiler(&self) -> &C {
        &self.compiler
    }

    /// Counts so far.
    pub fn stats(&self) -> VariantStats {
        VariantStats::read(&self.counters)
    }
}
