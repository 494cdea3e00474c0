//! Builds retrylab's shim (shim/retrylab_shim.c), the shared library preloaded into every
//! executor process so that clocks and entropy below the interpreter are the simulator's
//! (docs/executor-protocol.md, section 9). The binary carries it (`include_bytes!`) and
//! writes it out when it starts an executor: one file to ship, nothing to install.
//!
//! The C compiler is `$CC`, else `cc` (the linker Rust itself needs on Linux).

use std::path::PathBuf;
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=shim/retrylab_shim.c");
    println!("cargo:rerun-if-env-changed=CC");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let lib = out.join("libretrylab_shim.so");
    if target_os != "linux" {
        // The shim is for Linux with glibc; elsewhere the executors are refused (shim.rs).
        std::fs::write(&lib, b"").expect("write an empty shim");
        return;
    }
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let status = Command::new(&cc)
        .args([
            "-shared",
            "-fPIC",
            "-O2",
            "-std=gnu11",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-fvisibility=hidden",
            "-o",
        ])
        .arg(&lib)
        .arg("shim/retrylab_shim.c")
        .arg("-ldl")
        .status()
        .unwrap_or_else(|e| {
            panic!("cannot run the C compiler `{cc}` for shim/retrylab_shim.c: {e}")
        });
    assert!(
        status.success(),
        "`{cc}` failed on shim/retrylab_shim.c ({status})"
    );
}
