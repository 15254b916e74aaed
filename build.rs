//! Links the `lathe` binary at a fixed address on Linux/glibc.
//!
//! The generated tables (instruction forms, opcodes, enum texts) are
//! static data full of pointers: a position-independent executable has
//! about 40,000 of them relocated at every start, which writes to (and
//! copies) some 300 pages before `main` runs, most of a fresh `lathe
//! disasm`'s time. A fixed-address executable has them resolved by the
//! linker. Only the binary is linked this way; the libraries are
//! unchanged.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo:rustc-link-arg-bin=lathe=-no-pie");
    }
}
