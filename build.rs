//! Links the `lathe` binary at a fixed address, and statically, on Linux/glibc.
//!
//! Fixed address: the generated tables (instruction forms, opcodes, enum
//! texts) are static data full of pointers: a position-independent
//! executable has about 40,000 of them relocated at every start, which
//! writes to (and copies) some 300 pages before `main` runs, most of a
//! fresh `lathe disasm`'s time. A fixed-address executable has them
//! resolved by the linker.
//!
//! Static: a dynamically linked process first runs the dynamic loader,
//! which maps libc, libm and libgcc_s and looks up about 200 symbols
//! (a quarter of a million instructions, a sixth of `lathe --version`).
//! Rustc links statically only with `-C target-feature=+crt-static`, a
//! flag Cargo cannot give one binary alone (it would reach the proc
//! macros, which must stay dynamic libraries). Rustc names the system
//! libraries (`-lc`, `-lm`, `-lgcc_s`, ...) in dynamic mode, and the
//! linker takes, in each directory of its search path in turn, a shared
//! library or else an archive. So the binary's link gets `-static` and, first
//! in the search path, a directory holding only archives under those names:
//! linker scripts naming glibc's archives (found by asking the C compiler,
//! the linker driver) and, for libgcc_s, the static libgcc and its unwinder.
//! Without the archives (no libc.a installed) the binary stays dynamic.
//!
//! Only the binary is linked this way; the libraries, tests (which load
//! Vulkan drivers) and proc macros are unchanged.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os != "linux" || env != "gnu" {
        return;
    }
    println!("cargo:rustc-link-arg-bin=lathe=-no-pie");
    // The archives are the host C compiler's; only link with them for the host.
    if std::env::var("TARGET").ok() != std::env::var("HOST").ok() {
        return;
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("Cargo sets OUT_DIR"));
    if let Some(dir) = static_libraries(&out.join("static-libs")) {
        println!("cargo:rustc-link-arg-bin=lathe=-static");
        println!("cargo:rustc-link-arg-bin=lathe=-L{}", dir.display());
    }
}

/// The archive the C compiler links for `name` (e.g. `libc.a`), if it has one.
fn archive(cc: &str, name: &str) -> Option<PathBuf> {
    let out = Command::new(cc)
        .arg(format!("-print-file-name={name}"))
        .output()
        .ok()?;
    let path = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
    // An unknown file is echoed back as its bare name.
    (out.status.success() && path.is_absolute() && path.is_file()).then_some(path)
}

/// The libraries rustc names for glibc, each with the archives that stand in for it.
const LIBRARIES: [(&str, &[&str]); 7] = [
    ("c", &["libc.a"]),
    ("m", &["libm.a"]),
    ("pthread", &["libpthread.a"]),
    ("dl", &["libdl.a"]),
    ("rt", &["librt.a"]),
    ("util", &["libutil.a"]),
    ("gcc_s", &["libgcc_eh.a", "libgcc.a"]),
];

/// Fills `dir` with one linker script per library in `LIBRARIES`, named as
/// its archive, or returns `None` if an archive is missing.
fn static_libraries(dir: &Path) -> Option<PathBuf> {
    let cc = std::env::var("RUSTC_LINKER").unwrap_or_else(|_| "cc".into());
    std::fs::create_dir_all(dir).ok()?;
    for (lib, archives) in LIBRARIES {
        let mut paths = Vec::new();
        for name in archives {
            paths.push(archive(&cc, name)?.display().to_string());
        }
        let script = format!("GROUP ( {} )\n", paths.join(" "));
        std::fs::write(dir.join(format!("lib{lib}.a")), script).ok()?;
    }
    Some(dir.to_path_buf())
}
