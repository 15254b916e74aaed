//! The injected compile step.

/// Compiles the value a cache stores for a key: a sampling routine for a
/// descriptor combination, or a shader variant for a shader key.
///
/// Every closure `Fn(&K) -> Result<O, E>` is a `Compiler<K>`, so callers
/// rarely implement this by hand. It must be a pure function of the key as
/// far as the caches are concerned: they call it once per key and hand the
/// result to everyone who asks for that key afterwards.
///
/// The caches call it without holding any lock, so it may look up other
/// keys in the same cache; looking up the key it is compiling would wait
/// for itself forever.
pub trait Compiler<K> {
    /// What compilation produces.
    type Output;
    /// Why compilation can fail.
    type Error;

    /// Compiles the value for `key`.
    fn compile(&self, key: &K) -> Result<Self::Output, Self::Error>;
}

impl<K, O, E, F> Compiler<K> for F
where
    F: Fn(&K) -> Result<O, E>,
{
    type Output = O;
    type Error = E;

    fn compile(&self, key: &K) -> Result<O, E> {
        self(key)
    }
}
