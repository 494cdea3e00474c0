//! Running the `retrylab` binary from tests: from the project root, with its output as text.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Command, Output};

/// The project root (where `models/` is).
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs the binary with `args` from the project root.
pub fn retrylab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_retrylab"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("start the retrylab binary")
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs a command line exactly as printed, through the shell, from the project root.
pub fn shell(line: &str) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(line)
        .current_dir(root())
        .output()
        .expect("start sh")
}
