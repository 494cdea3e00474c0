//! The run's own storage (docs/executor-protocol.md, section 9): every run of an external
//! executor gets a directory of its own, a *slot*, with `run/` (shared by the run's workers:
//! the deployment's shared volume) and `wN/` for each worker N (its machine's local disk:
//! the process's working directory, `HOME`, and `tmp/` as `TMPDIR`), made empty when the run
//! starts, so that nothing one run writes reaches another run or command.
//!
//! The slots live in one private directory per command (`retrylab-storage-XXXXXX` in
//! `TMPDIR`, or in `--executor-storage DIR`), removed when the command ends (leftovers.rs).
//! A thread runs one world at a time, so each thread has its slot (`sK`), emptied at each
//! run's start. Before it sends a life's `start`, retrylab writes the life's slot into
//! `lives/PID`; the shim (shim.rs) reads it at `start` and enters the worker's directory.
//!
//! A crash leaves the directories as they are (written bytes survive a process's death);
//! with `workers.journal: volatile` a restarted worker finds its own directory empty, as a
//! replaced container would, and the run's `run/` as it was.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use super::leftovers::TempDir;

/// `--executor-storage DIR`: where the command's storage directory is made.
static BASE: OnceLock<PathBuf> = OnceLock::new();
/// `--executor-storage-max-mb`: the largest file an executor may write, in MiB.
static MAX_FILE_MB: AtomicU64 = AtomicU64::new(DEFAULT_MAX_FILE_MB);
/// The default of `--executor-storage-max-mb`.
pub const DEFAULT_MAX_FILE_MB: u64 = 1024;

/// Sets the flags' values; the first call wins (a command has one set of flags).
pub(crate) fn configure(base: Option<&Path>, max_file_mb: u64) -> Result<(), String> {
    if max_file_mb == 0 {
        return Err("--executor-storage-max-mb: must be at least 1".into());
    }
    MAX_FILE_MB.store(max_file_mb, Ordering::Relaxed);
    if let Some(b) = base {
        let meta =
            std::fs::metadata(b).map_err(|e| format!("--executor-storage {}: {e}", b.display()))?;
        if !meta.is_dir() {
            return Err(format!(
                "--executor-storage {}: not a directory",
                b.display()
            ));
        }
        let abs = std::path::absolute(b)
            .map_err(|e| format!("--executor-storage {}: {e}", b.display()))?;
        let _ = BASE.set(abs);
    }
    Ok(())
}

/// The largest file an executor process may write, in bytes (its `RLIMIT_FSIZE`).
pub(crate) fn max_file_bytes() -> u64 {
    MAX_FILE_MB.load(Ordering::Relaxed).saturating_mul(1 << 20)
}

/// The command's storage directory, made on the first call.
pub(crate) fn root() -> Result<&'static Path, String> {
    static ROOT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    ROOT.get_or_init(|| {
        let base = BASE.get().cloned().unwrap_or_else(std::env::temp_dir);
        let dir = TempDir::new_in(&base, "retrylab-storage").map_err(|e| {
            format!("the executors' storage: {e} (--executor-storage DIR puts it elsewhere)")
        })?;
        let path = dir.path().to_path_buf();
        std::fs::create_dir(path.join("lives")).map_err(|e| {
            format!(
                "the executors' storage: cannot make {}/lives: {e}",
                path.display()
            )
        })?;
        // Removed when the command ends (leftovers::Sweep).
        std::mem::forget(dir);
        Ok(path)
    })
    .as_ref()
    .map(PathBuf::as_path)
    .map_err(Clone::clone)
}

static NEXT_SLOT: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static SLOT: usize = NEXT_SLOT.fetch_add(1, Ordering::Relaxed);
}

/// This thread's slot: the storage of the run it runs.
pub(crate) fn slot() -> Result<PathBuf, String> {
    Ok(root()?.join(format!("s{}", SLOT.with(|s| *s))))
}

fn make(p: &Path) -> Result<(), String> {
    std::fs::create_dir_all(p).map_err(|e| {
        format!(
            "the run's storage: cannot make {}: {e} (--executor-storage DIR puts it elsewhere)",
            p.display()
        )
    })
}

fn empty(p: &Path) -> Result<(), String> {
    match std::fs::remove_dir_all(p) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!(
            "the run's storage: cannot empty {}: {e}",
            p.display()
        )),
    }
}

/// The names in directory `p`, sorted; `None` if it cannot be read.
fn names(p: &Path) -> Option<Vec<std::ffi::OsString>> {
    let mut v: Vec<_> = std::fs::read_dir(p)
        .ok()?
        .map(|e| e.map(|e| e.file_name()))
        .collect::<Result<_, _>>()
        .ok()?;
    v.sort();
    Some(v)
}

/// Whether slot `s` holds exactly the empty directories of a run with `workers` workers
/// (the previous run wrote nothing): reading four small directories costs far less than
/// removing and making them again.
fn is_clean(s: &Path, workers: u32) -> bool {
    let mut want: Vec<std::ffi::OsString> = (0..workers).map(|w| format!("w{w}").into()).collect();
    want.push("run".into());
    want.sort();
    if names(s).as_ref() != Some(&want) || names(&s.join("run")).is_none_or(|n| !n.is_empty()) {
        return false;
    }
    (0..workers).all(|w| {
        let dir = s.join(format!("w{w}"));
        names(&dir).as_deref() == Some(&["tmp".into()][..])
            && names(&dir.join("tmp")).is_some_and(|n| n.is_empty())
    })
}

/// A run starts with `workers` workers: its slot, empty.
pub(crate) fn begin_run(workers: u32) -> Result<(), String> {
    let s = slot()?;
    if is_clean(&s, workers) {
        return Ok(());
    }
    empty(&s)?;
    make(&s.join("run"))?;
    for w in 0..workers {
        make(&s.join(format!("w{w}")).join("tmp"))?;
    }
    Ok(())
}

/// Worker `worker`'s directory lost (`workers.journal: volatile`): empty again.
pub(crate) fn lose_worker(worker: u32) -> Result<(), String> {
    let s = slot()?;
    let w = s.join(format!("w{worker}"));
    empty(&w)?;
    empty(&s.join(SYNCED).join(format!("w{worker}")))?;
    make(&w.join("tmp"))
}

/// Where the shim keeps, beside the slot's directories, the bytes of each file of a worker's
/// directory as its last commit left them (`.synced/wN/...`), when a crash may lose the
/// worker's machine (`workers.crash.machine_loss`).
const SYNCED: &str = ".synced";

/// Worker `worker`'s machine lost (`workers.crash.machine_loss`): each file of its directory
/// goes back to the bytes its last commit made durable (kept by the shim under `.synced`), and
/// a file never committed is left empty, as a disk that was never told to flush keeps it.
/// Names (files made, renamed, removed) stay as they are.
pub(crate) fn lose_unsynced(worker: u32) -> Result<(), String> {
    let s = slot()?;
    let rel = format!("w{worker}");
    revert(&s.join(&rel), &s.join(SYNCED).join(&rel))
}

fn revert(dir: &Path, synced: &Path) -> Result<(), String> {
    let fail = |p: &Path, e: std::io::Error| {
        format!(
            "the run's storage: cannot restore {} to its last commit: {e}",
            p.display()
        )
    };
    let entries = std::fs::read_dir(dir).map_err(|e| fail(dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| fail(dir, e))?;
        let path = entry.path();
        let kept = synced.join(entry.file_name());
        let meta = std::fs::symlink_metadata(&path).map_err(|e| fail(&path, e))?;
        if meta.is_dir() {
            revert(&path, &kept)?;
        } else if meta.is_file() {
            match std::fs::read(&kept) {
                Ok(bytes) => std::fs::write(&path, bytes),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => std::fs::OpenOptions::new()
                    .write(true)
                    .open(&path)
                    .and_then(|f| f.set_len(0)),
                Err(e) => Err(e),
            }
            .map_err(|e| fail(&path, e))?;
        }
    }
    Ok(())
}

/// Tells the shim of process `pid` which slot its next `start` belongs to, and whether to
/// keep each file's committed bytes (`synced`: a crash may lose the worker's machine).
pub(crate) fn enter(pid: u32, synced: bool) -> Result<(), String> {
    let s = slot()?;
    let f = root()?.join("lives").join(pid.to_string());
    let mut text = s.as_os_str().as_encoded_bytes().to_vec();
    if synced {
        text.extend_from_slice(b"\nsynced");
    }
    std::fs::write(&f, text)
        .map_err(|e| format!("the run's storage: cannot write {}: {e}", f.display()))
}

/// A digest of this thread's slot as it stands: every directory's and file's path relative
/// to the slot, in name order, and each file's bytes (not its times, which are kept out of
/// every comparison). `explore` folds it into a world's fingerprint, so that two states
/// whose executors wrote different files are never taken for one. `None` before any run.
pub(crate) fn digest() -> Option<u64> {
    use std::hash::Hasher;
    let s = slot().ok()?;
    if !s.exists() {
        return None;
    }
    let mut h = crate::sim::hash::StableHasher::new();
    fold(&s, &s, &mut h);
    Some(h.finish())
}

fn fold(slot: &Path, dir: &Path, h: &mut crate::sim::hash::StableHasher) {
    use std::hash::Hasher;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths {
        let rel = p.strip_prefix(slot).unwrap_or(&p);
        h.write(rel.as_os_str().as_encoded_bytes());
        let Ok(meta) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if meta.is_dir() {
            h.write_u8(b'd');
            fold(slot, &p, h);
        } else if meta.is_file() {
            h.write_u8(b'f');
            if let Ok(bytes) = std::fs::read(&p) {
                h.write_u64(bytes.len() as u64);
                h.write(&bytes);
            }
        } else {
            h.write_u8(b'o');
            if let Ok(target) = std::fs::read_link(&p) {
                h.write(target.as_os_str().as_encoded_bytes());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The digest follows the files' names and bytes, not their times.
    #[test]
    fn the_digest_is_the_files_names_and_bytes() {
        begin_run(2).unwrap();
        let s = slot().unwrap();
        let empty = digest().unwrap();
        std::fs::write(s.join("w0").join("journal.db"), b"one").unwrap();
        let one = digest().unwrap();
        assert_ne!(one, empty);
        // The same bytes written again, later: the same state.
        std::fs::write(s.join("w0").join("journal.db"), b"one").unwrap();
        assert_eq!(digest().unwrap(), one);
        // The same bytes in the other worker's directory: another state.
        std::fs::remove_file(s.join("w0").join("journal.db")).unwrap();
        std::fs::write(s.join("w1").join("journal.db"), b"one").unwrap();
        let other = digest().unwrap();
        assert_ne!(other, one);
        assert_ne!(other, empty);
        // A new run starts empty.
        begin_run(2).unwrap();
        assert_eq!(digest().unwrap(), empty);
        lose_worker(0).unwrap();
        assert_eq!(digest().unwrap(), empty);
        let _ = std::fs::remove_dir_all(root().unwrap());
    }
}
