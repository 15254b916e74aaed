//! Deterministic behaviour of variant sets.
#![cfg(not(loom))]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use lathe_variants::{LookupError, Variants};

/// A stand-in for ir3's shader key: state the variant is specialised on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct ShaderKey {
    two_sided_color: bool,
    binning_pass: bool,
    ucp_enables: u8,
}

#[derive(Debug)]
struct Unsupported;

impl std::fmt::Display for Unsupported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("user clip planes are not supported in the binning pass")
    }
}

impl std::error::Error for Unsupported {}

#[test]
fn each_key_gets_its_own_variant_once() {
    let variants = Variants::new(|key: &ShaderKey| Ok::<_, Unsupported>(format!("{key:?}")));
    let plain = ShaderKey {
        two_sided_color: false,
        binning_pass: false,
        ucp_enables: 0,
    };
    let binning = ShaderKey {
        binning_pass: true,
        ..plain
    };
    assert_eq!(variants.is_empty(), Ok(true));
    let a = variants.get(&plain).expect("compiles");
    let b = variants.get(&binning).expect("compiles");
    assert_eq!(*a, format!("{plain:?}"));
    assert_eq!(*b, format!("{binning:?}"));
    assert!(Arc::ptr_eq(&a, &variants.get(&plain).expect("cached")));
    assert_eq!(variants.len(), Ok(2));
    assert_eq!(variants.contains(&binning), Ok(true));
    let stats = variants.stats();
    assert_eq!((stats.hits, stats.misses, stats.compilations), (1, 2, 2));
}

#[test]
fn a_failed_variant_is_not_stored_and_is_compiled_again_next_time() {
    let attempts = AtomicUsize::new(0);
    let variants = Variants::new(|key: &ShaderKey| {
        let attempt = attempts.fetch_add(1, Ordering::SeqCst);
        if key.binning_pass && key.ucp_enables != 0 && attempt == 0 {
            Err(Unsupported)
        } else {
            Ok(attempt)
        }
    });
    let key = ShaderKey {
        two_sided_color: true,
        binning_pass: true,
        ucp_enables: 3,
    };
    match variants.get(&key) {
        Err(LookupError::Compile(error)) => {
            assert_eq!(error.to_string(), Unsupported.to_string());
        }
        other => panic!("expected the compile error, got {other:?}"),
    }
    assert_eq!(variants.contains(&key), Ok(false));
    assert_eq!(variants.get(&key).map(|v| *v).ok(), Some(1));
    assert_eq!(variants.get(&key).map(|v| *v).ok(), Some(1));
    let stats = variants.stats();
    assert_eq!(
        (stats.compilations, stats.compile_failures, stats.hits),
        (2, 1, 1)
    );
}

#[test]
fn lookup_errors_chain_to_the_compiler_error() {
    let variants = Variants::new(|_: &u8| Err::<(), _>(Unsupported));
    let error = variants.get(&0).expect_err("always fails");
    let source = std::error::Error::source(&error).expect("has a source");
    assert_eq!(source.to_string(), Unsupported.to_string());
}
