//! retrylab's shim (shim/retrylab_shim.c, built by build.rs): the shared library preloaded
//! into every executor process, so that the clocks and the entropy a program reads below its
//! interpreter (libc's `clock_gettime`, `getrandom`, `/dev/urandom`, timed waits) are the
//! simulator's (docs/executor-protocol.md, section 9).
//!
//! The binary carries the library and writes it, once per command, into a private
//! directory that the command removes when it ends (leftovers.rs); every executor process
//! is started with it in `LD_PRELOAD`, and a process that does not have it mapped after its
//! `hello` is refused: its clocks would be the machine's.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::leftovers::TempDir;

/// The library, as build.rs made it (empty where there is none: not Linux).
static LIBRARY: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/libretrylab_shim.so"));

/// The file's name, also what `/proc/PID/maps` shows of a process that loaded it.
const FILE: &str = "libretrylab_shim.so";

/// The path of the library written for this command, written on the first call.
pub(crate) fn path() -> Result<&'static Path, String> {
    static PATH: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    PATH.get_or_init(write)
        .as_ref()
        .map(PathBuf::as_path)
        .map_err(Clone::clone)
}

fn write() -> Result<PathBuf, String> {
    if LIBRARY.is_empty() {
        return Err(
            "external executors run on Linux only (their clocks and entropy are served by a \
             shim preloaded into them, for Linux with glibc)"
                .into(),
        );
    }
    let dir = TempDir::new("retrylab-shim").map_err(|e| format!("retrylab's shim: {e}"))?;
    let path = dir.path().join(FILE);
    std::fs::write(&path, LIBRARY)
        .map_err(|e| format!("retrylab's shim: cannot write {}: {e}", path.display()))?;
    // Kept until the command ends: the registry removes it then (leftovers::Sweep).
    std::mem::forget(dir);
    Ok(path)
}

/// `LD_PRELOAD` for an executor process: the shim, then what the caller's environment
/// already preloads.
pub(crate) fn preload() -> Result<String, String> {
    let shim = path()?.display().to_string();
    Ok(match std::env::var("LD_PRELOAD") {
        Ok(more) if !more.trim().is_empty() => format!("{shim}:{more}"),
        _ => shim,
    })
}

/// Whether process `pid` has the shim mapped; `Err` with why it is not.
pub(crate) fn check_loaded(pid: u32) -> Result<(), String> {
    let Ok(shim) = path() else {
        return Err("retrylab's shim is not available on this system".into());
    };
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps"))
        .map_err(|e| format!("cannot read /proc/{pid}/maps: {e}"))?;
    let want = shim.display().to_string();
    if maps.lines().any(|l| l.ends_with(&want)) {
        return Ok(());
    }
    Err(format!(
        "retrylab's shim ({FILE}, preloaded through LD_PRELOAD) is not loaded in the \
         executor's process (pid {pid}), so its clocks and entropy below the interpreter would \
         be the machine's: a statically linked program, a setuid one, or a launcher that \
         clears LD_PRELOAD does not load it (run the interpreter itself, e.g. `.venv/bin/python \
         tool.py`; docs/executor-protocol.md, section 9)"
    ))
}
