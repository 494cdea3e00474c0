//! Worker lives forked from a zygote (docs/executor-protocol.md, section 7): a process that
//! did its imports, its `hello` and its `init`, and never ran a call, is told `fork`; its
//! child is the new worker's process, with nothing left from an earlier life.
//!
//! The child's channel is two FIFOs in its zygote's private temporary directory, opened in an order
//! that cannot deadlock: we open the child's output (`out`) for reading without blocking
//! before sending `fork`; the child opens `out` for writing (our reader is there: it does
//! not block), then its input (`in`) for reading, which blocks until we open `in` for
//! writing: we retry that without blocking while the child is alive, and once it succeeds
//! the child holds both ends, so the names are unlinked at once; the directory goes with its
//! zygote.
//!
//! A fork is two halves, [`begin`] (the FIFOs, `fork` sent) and [`finish`] (`forked` read,
//! the child's input opened), so that the design can fork the next life's process ahead of
//! need: the zygote's fork and the child's opens then overlap the simulation (on another
//! core, or while the simulator waits for an executor), and a worker life that needs a
//! process finds it there. A zygote's forks are all alike (it runs no call between them),
//! so a child forked ahead is the child a later fork would have made.

use std::ffi::CString;
use std::fs::File;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::leftovers::TempDir;
use super::message::{self, FromExec};
use super::process::{Process, RecvError};
use super::to_exec::ToExec;

/// The private temporary directory (mode 0700) of a zygote's FIFOs, made once for all its
/// forks and removed with what it holds when dropped (leftovers.rs records it meanwhile):
/// a worker life makes and removes two FIFOs, not a directory.
pub(crate) struct FifoDir {
    dir: TempDir,
    /// The number of the next fork's pair, `in-N` and `out-N`.
    next: u64,
}

impl FifoDir {
    pub(crate) fn new() -> Result<Self, String> {
        let dir = TempDir::new("retrylab-fork").map_err(|e| format!("a fork's FIFOs: {e}"))?;
        Ok(Self { dir, next: 0 })
    }
}

/// The two FIFOs of one fork, unlinked when dropped, on every path out of a fork: once the
/// child holds both ends, or when it failed.
struct Fifos {
    to_child: PathBuf,
    from_child: PathBuf,
}

impl Fifos {
    fn new(dir: &mut FifoDir) -> Result<Self, String> {
        let n = dir.next;
        dir.next += 1;
        let fifos = Self {
            to_child: dir.dir.path().join(format!("in-{n}")),
            from_child: dir.dir.path().join(format!("out-{n}")),
        };
        mkfifo(&fifos.to_child)?;
        mkfifo(&fifos.from_child)?;
        Ok(fifos)
    }
}

impl Drop for Fifos {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.to_child);
        let _ = std::fs::remove_file(&self.from_child);
    }
}

fn c_path(path: &Path) -> Result<CString, String> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| "a NUL byte in a FIFO's path".into())
}

fn mkfifo(path: &Path) -> Result<(), String> {
    let c = c_path(path)?;
    // SAFETY: a valid NUL-terminated path.
    if unsafe { libc::mkfifo(c.as_ptr(), 0o600) } != 0 {
        return Err(format!(
            "cannot make the FIFO {}: {}",
            path.display(),
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

/// Opens `path` without blocking, then makes the descriptor blocking again (reads are
/// polled with the watchdog; writes wait for room as a pipe's do).
fn open_nonblocking(path: &Path, flags: libc::c_int) -> std::io::Result<File> {
    let c = c_path(path).map_err(std::io::Error::other)?;
    // SAFETY: a valid NUL-terminated path; the descriptor is owned below.
    let fd = unsafe { libc::open(c.as_ptr(), flags | libc::O_NONBLOCK | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened and belongs to nobody else.
    let file = File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    // SAFETY: F_GETFL/F_SETFL on an open descriptor.
    unsafe {
        let fl = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, fl & !libc::O_NONBLOCK);
    }
    Ok(file)
}

/// A `fork` sent to a zygote and not yet answered: the child's FIFOs and our reading end
/// of its output. The zygote forks, and the child opens its FIFOs, while we do something
/// else ([`begin`] ahead of need, [`finish`] when a worker life needs the child).
pub(crate) struct Pending {
    fifos: Fifos,
    from: File,
}

/// Steps 1 and 2 of a fork (docs/executor-protocol.md, section 7): the FIFOs (in `dir`, the
/// zygote's), our reader of `out`, and `fork` sent to `zygote`.
pub(crate) fn begin(zygote: &mut Process, dir: &mut FifoDir) -> Result<Pending, String> {
    let fifos = Fifos::new(dir)?;
    let from = open_nonblocking(&fifos.from_child, libc::O_RDONLY)
        .map_err(|e| format!("cannot open the FIFO {}: {e}", fifos.from_child.display()))?;
    let msg = ToExec::Fork {
        input: fifos.to_child.display().to_string(),
        out: fifos.from_child.display().to_string(),
    };
    zygote.send(&msg.line())?;
    Ok(Pending { fifos, from })
}

/// The rest of the fork [`begin`] started: the zygote's `forked` read (waiting at most
/// `watchdog`), the child recorded, its input opened once it has opened it; the child, a
/// process initialized with `init`.
pub(crate) fn finish(
    pending: Pending,
    zygote: &mut Process,
    init: &str,
    watchdog: Duration,
) -> Result<Process, String> {
    let Pending { fifos, from } = pending;
    let pid = forked(zygote, watchdog)?;
    let to = open_writer(&fifos.to_child, pid, watchdog);
    let child = |to: File| Process::forked(pid, to, from, zygote, init.to_string());
    match to {
        Ok(to) => Ok(child(to)),
        Err(e) => {
            // Killed (its group and itself) as the process it would have been is when dropped.
            if let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") {
                drop(child(null));
            }
            Err(e)
        }
    }
}

/// Ends a fork [`begin`] started whose child no worker will run (the zygote is being
/// stopped): the child, once announced, is killed as any forked process is, so that its
/// zygote reaps it before it is killed itself and none is left behind.
pub(crate) fn abandon(pending: Pending, zygote: &mut Process, watchdog: Duration) {
    let Pending { fifos, from } = pending;
    if let Ok(pid) = forked(zygote, watchdog)
        && let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null")
    {
        drop(Process::forked(pid, null, from, zygote, String::new()));
    }
    drop(fifos);
}

/// Reads the zygote's `forked` and records the child it names.
fn forked(zygote: &mut Process, watchdog: Duration) -> Result<libc::pid_t, String> {
    let line = zygote.recv(watchdog).map_err(|e| match e {
        RecvError::Closed(s) => format!("the zygote closed its channel after `fork`: {s}"),
        RecvError::Watchdog(d) => format!("no `forked` within {} ms of `fork`", d.as_millis()),
        RecvError::Io(e) => e,
    })?;
    let pid = match message::parse(&line) {
        Ok(FromExec::Forked { pid }) if pid > 1 && pid <= i32::MAX as u32 => pid as libc::pid_t,
        Ok(m) => {
            return Err(format!(
                "expected `forked` with the child's pid after `fork`, got {}\n  the line: {line}",
                m.kind()
            ));
        }
        Err((code, why)) => return Err(format!("{why} [{code}]\n  the line: {line}")),
    };
    super::leftovers::forked(pid);
    super::process::record_pid(pid as u32);
    Ok(pid)
}

/// Opens the child's input for writing once the child has opened it for reading.
fn open_writer(path: &Path, pid: libc::pid_t, watchdog: Duration) -> Result<File, String> {
    let start = Instant::now();
    loop {
        match open_nonblocking(path, libc::O_WRONLY) {
            Ok(f) => return Ok(f),
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {}
            Err(e) => return Err(format!("cannot open the FIFO {}: {e}", path.display())),
        }
        // SAFETY: signal 0 only checks that the process exists.
        if unsafe { libc::kill(pid, 0) } != 0 {
            return Err(format!(
                "the forked process {pid} ended before it opened its channel"
            ));
        }
        if start.elapsed() > watchdog {
            return Err(format!(
                "the forked process {pid} did not open its channel within {} ms",
                watchdog.as_millis()
            ));
        }
        // The child is about to open it: let it run first (on one core it cannot otherwise),
        // then, if it is still not there, wait a little.
        if start.elapsed() < Duration::from_millis(1) {
            std::thread::yield_now();
        } else {
            std::thread::sleep(Duration::from_micros(100));
        }
    }
}
