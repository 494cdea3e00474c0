//! Runs the fuzz target on files, without libFuzzer (stable Rust): every file named, and every
//! file of every directory named. Exits 1 on the first input that panics, naming it.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;

fn main() {
    let mut files: Vec<PathBuf> = Vec::new();
    for arg in std::env::args_os().skip(1) {
        let path = PathBuf::from(arg);
        if path.is_dir() {
            let mut inside: Vec<PathBuf> = std::fs::read_dir(&path)
                .expect("read the directory")
                .map(|e| e.expect("read a directory entry").path())
                .filter(|p| p.is_file())
                .collect();
            inside.sort();
            files.extend(inside);
        } else {
            files.push(path);
        }
    }
    for f in &files {
        let data = std::fs::read(f).expect("read the input");
        if catch_unwind(AssertUnwindSafe(|| retrylab_fuzz::load_model(&data))).is_err() {
            eprintln!("{}: the target panicked", f.display());
            std::process::exit(1);
        }
    }
    println!("{} inputs, no panic", files.len());
}
