//! Nothing left behind: every executor process and every temporary directory retrylab makes
//! is recorded here from the moment it exists until it is gone, so that a command that ends
//! in any way leaves none (docs/executor-protocol.md, section 7).
//!
//! - A normal return, an error (exit 2, the watchdog's protocol error 31 among them) and a
//!   panic that unwinds: the owners ([`super::Process`], [`TempDir`]) kill and remove on
//!   drop; [`Sweep`], dropped last by the binary's `main`, kills and removes whatever an
//!   owner that was never dropped left in the registry.
//! - SIGINT and SIGTERM to retrylab: the executors run in process groups of their own (a
//!   terminal's Ctrl-C does not reach them), so [`on_signals`] installs a handler that has
//!   the registry's contents killed and removed, then exits with 128 + the signal (130 for
//!   SIGINT).
//!
//! Why a self-pipe and a thread rather than the cleanup in the handler itself: the cleanup
//! needs what a signal handler may not do (lock the registry, read `/proc` for a zygote's
//! children not yet announced, wait for processes, remove directories by paths that other
//! threads allocate and free), and a handler that read a lock-free registry would still race
//! with an owner freeing an entry. The handler only writes the signal's number to a pipe
//! (`write` is async-signal-safe; `errno` is kept); a thread blocked on the other end does the
//! cleanup in ordinary code. It takes the registry's lock and never gives it back: a thread
//! about to start a process or make a directory does so with the lock held
//! ([`spawn`], [`TempDir::new`]), so it either finished and recorded it before the cleanup
//! read the registry, or waits for the lock until the process exits; nothing is made
//! unrecorded. A second signal while the cleanup runs exits at once (`_exit`).
//!
//! Only the binary installs the handler ([`crate::cli::main_with`]); a library caller
//! ([`crate::cli::run_with`]) keeps its own signal handling, with the owners' drops. Nothing
//! here reads or changes what a run computes: determinism is untouched.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How a recorded process came to be, which decides who reaps it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Started by retrylab: its child, reaped by it.
    Spawned,
    /// Forked by a zygote (its parent, which reaps it), in a process group of its own.
    Forked,
}

/// What is alive now: process ids (each leads its own process group) and directories.
struct Live {
    processes: BTreeMap<libc::pid_t, Kind>,
    dirs: BTreeSet<PathBuf>,
}

static LIVE: Mutex<Live> = Mutex::new(Live {
    processes: BTreeMap::new(),
    dirs: BTreeSet::new(),
});

fn live() -> MutexGuard<'static, Live> {
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Spawns `cmd` (which puts the process in a group of its own) and records it, the lock
/// held throughout: see the module's documentation.
pub(crate) fn spawn(cmd: &mut Command) -> std::io::Result<Child> {
    let mut live = live();
    let child = cmd.spawn()?;
    live.processes
        .insert(child.id() as libc::pid_t, Kind::Spawned);
    Ok(child)
}

/// Records a process a zygote forked (announced by its `forked`). Until then, a cleanup
/// finds it as a child of its zygote.
pub(crate) fn forked(pid: libc::pid_t) {
    live().processes.insert(pid, Kind::Forked);
}

/// Forgets a process its owner has killed (and, if it was retrylab's child, reaped).
pub(crate) fn ended(pid: libc::pid_t) {
    live().processes.remove(&pid);
}

/// A private temporary directory (`mkdtemp` in `std::env::temp_dir()`, that is `TMPDIR`),
/// removed with what it holds when dropped.
pub(crate) struct TempDir {
    path: PathBuf,
}

impl TempDir {
    /// A new directory named `PREFIX-XXXXXX`.
    pub(crate) fn new(prefix: &str) -> Result<Self, String> {
        Self::new_in(&std::env::temp_dir(), prefix)
    }

    /// A new directory named `PREFIX-XXXXXX` in `base`.
    pub(crate) fn new_in(base: &Path, prefix: &str) -> Result<Self, String> {
        let base = base.to_path_buf();
        let template = base.join(format!("{prefix}-XXXXXX"));
        let mut bytes = CString::new(template.as_os_str().as_bytes())
            .map_err(|_| "a NUL byte in the temporary directory's path".to_string())?
            .into_bytes_with_nul();
        let mut live = live();
        // SAFETY: a NUL-terminated template that mkdtemp rewrites in place.
        let r = unsafe { libc::mkdtemp(bytes.as_mut_ptr().cast()) };
        if r.is_null() {
            return Err(format!(
                "cannot make a private directory in {}: {}",
                base.display(),
                std::io::Error::last_os_error()
            ));
        }
        bytes.pop();
        let path = PathBuf::from(std::ffi::OsStr::from_bytes(&bytes));
        live.dirs.insert(path.clone());
        Ok(Self { path })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
        live().dirs.remove(&self.path);
    }
}

/// Kills and removes, when dropped, whatever is still recorded: the last thing the binary's
/// `main` drops, on a return or a panic's unwinding.
pub(crate) struct Sweep;

impl Drop for Sweep {
    fn drop(&mut self) {
        let mut live = live();
        clean(&mut live);
    }
}

/// Kills every recorded process group and removes every recorded directory. A zygote's
/// children go first (and are waited for, bounded, so that the zygote reaps them and none
/// is left to init as a zombie), found in `/proc` as well as in the registry: a child forked
/// but not yet announced is there too.
fn clean(live: &mut Live) {
    let mut first: BTreeSet<libc::pid_t> = live
        .processes
        .iter()
        .filter(|(_, k)| **k == Kind::Forked)
        .map(|(p, _)| *p)
        .collect();
    first.extend(children_of(&live.processes));
    for &pid in &first {
        kill_group(pid);
    }
    let start = Instant::now();
    for &pid in &first {
        while !super::process::gone(pid) && start.elapsed() < Duration::from_secs(2) {
            std::thread::sleep(Duration::from_millis(1));
        }
    }
    for (&pid, &kind) in &live.processes {
        if kind == Kind::Spawned {
            kill_group(pid);
            let mut status = 0;
            // SAFETY: waits for our own child; an error (another thread reaped it) is harmless.
            unsafe { libc::waitpid(pid, &mut status, 0) };
        }
    }
    live.processes.clear();
    for dir in std::mem::take(&mut live.dirs) {
        let _ = std::fs::remove_dir_all(dir);
    }
}

fn kill_group(pid: libc::pid_t) {
    // SAFETY: signals the group `pid` leads, then `pid` itself (in case it left the group);
    // harmless if gone.
    unsafe {
        libc::kill(-pid, libc::SIGKILL);
        libc::kill(pid, libc::SIGKILL);
    }
}

/// The processes whose parent is one of `parents`, and that are not in it themselves.
fn children_of(parents: &BTreeMap<libc::pid_t, Kind>) -> Vec<libc::pid_t> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for entry in dir.flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|s| s.parse().ok()) else {
            continue;
        };
        if parents.contains_key(&pid) {
            continue;
        }
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // After the command's name in parentheses: the state, then the parent's id.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<libc::pid_t>().ok());
        if ppid.is_some_and(|p| parents.contains_key(&p)) {
            found.push(pid);
        }
    }
    found
}

/// The write end of the self-pipe, -1 until [`on_signals`] made it.
static PIPE_W: AtomicI32 = AtomicI32::new(-1);
/// Signals received so far.
static RECEIVED: AtomicU32 = AtomicU32::new(0);

/// The handler: async-signal-safe operations only (atomics, `write`, `_exit`).
extern "C" fn on_signal(sig: libc::c_int) {
    // SAFETY: errno of this thread, saved and restored around the write.
    let saved = unsafe { *libc::__errno_location() };
    if RECEIVED.fetch_add(1, Ordering::SeqCst) > 0 {
        // SAFETY: _exit is async-signal-safe.
        unsafe { libc::_exit(128 + sig) };
    }
    let byte = sig as u8;
    // SAFETY: one byte from a local to the pipe's write end.
    unsafe {
        libc::write(
            PIPE_W.load(Ordering::SeqCst),
            (&byte as *const u8).cast(),
            1,
        );
        *libc::__errno_location() = saved;
    }
}

/// Installs the SIGINT and SIGTERM handler and its cleanup thread (see the module's
/// documentation). A signal the process was started ignoring (`nohup`, a background job of
/// a non-interactive shell) stays ignored. Call once, before any executor starts.
pub(crate) fn on_signals() {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return;
    }
    let (r, w) = (fds[0], fds[1]);
    PIPE_W.store(w, Ordering::SeqCst);
    let watcher = std::thread::Builder::new()
        .name("retrylab-signals".into())
        .spawn(move || {
            let mut byte = 0u8;
            loop {
                // SAFETY: reads one byte into a local from the pipe's read end.
                let n = unsafe { libc::read(r, (&mut byte as *mut u8).cast(), 1) };
                if n == 1 {
                    break;
                }
                if n < 0
                    && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
                {
                    continue;
                }
                return;
            }
            // The lock is never given back: see the module's documentation.
            let mut live = live();
            clean(&mut live);
            std::process::exit(128 + i32::from(byte));
        });
    if watcher.is_err() {
        return;
    }
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: sigaction with a zeroed struct filled below; the handler is an extern "C"
        // function that only does async-signal-safe work.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut old) == 0
                && old.sa_sigaction == libc::SIG_IGN
            {
                continue;
            }
            let mut act: libc::sigaction = std::mem::zeroed();
            act.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
            act.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut act.sa_mask);
            libc::sigaction(sig, &act, std::ptr::null_mut());
        }
    }
}
