//! The Python interpreter of the tests that run Python executors: `RETRYLAB_PYTHON`
//! (`.ci/run` creates a fresh virtual environment and names it), else a virtual environment
//! created once under target/tmp with `python3 -m venv` and pip (which needs PyPI).

use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

/// The Python with the client and the pinned packages.
pub fn python() -> &'static str {
    static PYTHON: OnceLock<String> = OnceLock::new();
    PYTHON.get_or_init(|| {
        if let Ok(p) = std::env::var("RETRYLAB_PYTHON") {
            return p;
        }
        let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pyenv");
        let bin = venv.join("bin/python");
        let ready = venv.join("installed");
        if !ready.exists() {
            let ok = |c: &mut Command, what: &str| {
                let s = c.status().unwrap_or_else(|e| panic!("{what}: {e}"));
                assert!(s.success(), "{what} failed: {s}");
            };
            ok(
                Command::new("python3").args(["-m", "venv"]).arg(&venv),
                "python3 -m venv (set RETRYLAB_PYTHON to a Python with the client instead)",
            );
            ok(
                Command::new(&bin).args([
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "-r",
                    "examples/python/requirements.txt",
                    "./clients/python",
                ]),
                "pip install of examples/python/requirements.txt and clients/python",
            );
            std::fs::write(&ready, "").unwrap();
        }
        bin.display().to_string()
    })
}
