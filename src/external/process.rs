//! One executor process: spawned with the protocol on fds 3 and 4, in its own process group,
//! its stdout and stderr drained into a tail kept for error messages, killed (the whole group)
//! when dropped; or forked by a zygote (docs/executor-protocol.md, section 7), its channel
//! two FIFOs, its stdout and stderr the zygote's, reaped by the zygote.
//!
//! Reading is blocking with a wall-clock watchdog (`poll`): the watchdog decides nothing in
//! a run, it only turns a process that never ends its turn into an error instead of a hang.

use std::collections::VecDeque;
use std::ffi::CString;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Lines of the process's stdout and stderr kept for error messages.
const TAIL_LINES: usize = 12;

/// The last lines a process wrote on stdout and stderr.
#[derive(Default)]
struct Tail {
    lines: VecDeque<String>,
}

impl Tail {
    fn push(&mut self, line: String) {
        if self.lines.len() == TAIL_LINES {
            self.lines.pop_front();
        }
        self.lines.push_back(line);
    }
}

/// Why reading a message failed.
#[derive(Debug)]
pub enum RecvError {
    /// The process closed its end of the channel or exited; its exit status if known.
    Closed(String),
    /// No complete line within the watchdog.
    Watchdog(Duration),
    /// The line is not UTF-8, or another I/O error.
    Io(String),
}

/// How a process came to be, which decides how it is watched and killed.
enum Origin {
    /// Started by us: ours to wait for.
    Spawned(Child),
    /// Forked by a zygote: its parent (which ignores SIGCHLD) reaps it, not us.
    Forked(libc::pid_t),
}

/// The children of a zygote that were killed and may not have ended yet: the zygote waits
/// for them before it is killed itself, so that none becomes a zombie of init, and a kill in
/// the middle of a run does not wait for a process's memory to be freed.
type Dying = Arc<Mutex<Vec<libc::pid_t>>>;

/// A running executor process.
pub struct Process {
    origin: Origin,
    to: File,
    from: File,
    buf: Vec<u8>,
    tail: Arc<Mutex<Tail>>,
    drains: Vec<JoinHandle<()>>,
    /// Everything written to the process and read from it, for `--executor-output`-style
    /// debugging: off by default.
    echo: bool,
    killed: bool,
    /// Whether its `hello` was read.
    pub greeted: bool,
    /// Whether `init` was exchanged with it.
    pub initialized: bool,
    /// The `init` line it was given: only a world whose model gives the same (the same
    /// `executor` section, parameters and provider face) may reuse it.
    pub init: String,
    /// Whether it ran a worker's life before (its next `start` says `reset`).
    pub used: bool,
    /// Whether it is a zygote: its forked children share its stdout and stderr, so its
    /// drains are not waited for when it is killed (a child may still hold them).
    pub zygote: bool,
    /// A zygote's killed children (or, for a forked process, its zygote's).
    dying: Dying,
}

/// A pipe whose two ends close on exec.
fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as RawFd; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    let r = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: pipe2 succeeded, so both descriptors are open and owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

impl Process {
    /// Starts `command` (a program and its arguments) with the protocol on fds 3 (to it) and
    /// 4 (from it) and `env` added to its environment.
    pub fn spawn(command: &[String], env: &[(&str, String)], echo: bool) -> Result<Self, String> {
        let Some(program) = command.first() else {
            return Err("the command is empty".into());
        };
        let io = |e: std::io::Error| format!("cannot start `{}`: {e}", command.join(" "));
        let (to_child_r, to_child_w) = pipe().map_err(io)?;
        let (from_child_r, from_child_w) = pipe().map_err(io)?;
        let (in_fd, out_fd) = (to_child_r.as_raw_fd(), from_child_w.as_raw_fd());
        // Checked here, not in the child: a NUL in an argument is refused by Command itself.
        let _ = CString::new(program.as_str()).map_err(|_| "a NUL byte in the command")?;
        let mut cmd = Command::new(program);
        cmd.args(&command[1..])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env("RETRYLAB_FD_IN", "3")
            .env("RETRYLAB_FD_OUT", "4")
            .env("RETRYLAB_PROTOCOL", super::PROTOCOL.to_string())
            .env("PYTHONHASHSEED", "0")
            // A wall clock read without a zone (datetime.now()) reads the same everywhere.
            .env("TZ", "UTC")
            .env("PYTHONUNBUFFERED", "1")
            // No .pyc beside the user's scripts: a run leaves their tree as it was.
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .process_group(0);
        // Clocks and entropy below the interpreter: the simulator's (shim.rs); files: the
        // run's own storage (storage.rs).
        cmd.env("LD_PRELOAD", super::shim::preload()?);
        cmd.env("RETRYLAB_STORAGE", super::storage::root()?);
        let max_file = super::storage::max_file_bytes() as libc::rlim_t;
        for (k, v) in env {
            cmd.env(k, v);
        }
        // SAFETY: between fork and exec the closure only calls fcntl and dup2, which are
        // async-signal-safe, and touches no memory the parent's other threads may hold.
        unsafe {
            cmd.pre_exec(move || {
                // Move both ends above 4 first, so that placing one on 3 or 4 cannot close
                // the other; dup2 onto 3 and 4 then clears close-on-exec on the copies.
                // The storage's size bound: no file the executor writes grows beyond it.
                let limit = libc::rlimit {
                    rlim_cur: max_file,
                    rlim_max: max_file,
                };
                if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                let a = libc::fcntl(in_fd, libc::F_DUPFD_CLOEXEC, 10);
                let b = libc::fcntl(out_fd, libc::F_DUPFD_CLOEXEC, 10);
                if a < 0 || b < 0 || libc::dup2(a, 3) < 0 || libc::dup2(b, 4) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        // Recorded as it starts, so that a signal's cleanup kills it (leftovers.rs).
        let mut child = super::leftovers::spawn(&mut cmd).map_err(io)?;
        record_pid(child.id());
        // The child holds its own copies; closing ours makes EOF visible both ways.
        drop(to_child_r);
        drop(from_child_w);
        let tail = Arc::new(Mutex::new(Tail::default()));
        let mut drains = Vec::new();
        if let Some(out) = child.stdout.take() {
            drains.push(drain(out, "stdout", Arc::clone(&tail), echo));
        }
        if let Some(err) = child.stderr.take() {
            drains.push(drain(err, "stderr", Arc::clone(&tail), echo));
        }
        Ok(Self {
            origin: Origin::Spawned(child),
            to: File::from(to_child_w),
            from: File::from(from_child_r),
            buf: Vec::with_capacity(4096),
            tail,
            drains,
            echo,
            killed: false,
            greeted: false,
            initialized: false,
            init: String::new(),
            used: false,
            zygote: false,
            dying: Dying::default(),
        })
    }

    /// The child `pid` a zygote forked, initialized with `init`, its channel `to` and
    /// `from` (the FIFOs' ends), its output in the zygote's `tail`.
    pub(crate) fn forked(
        pid: libc::pid_t,
        to: File,
        from: File,
        zygote: &Process,
        init: String,
    ) -> Self {
        Self {
            origin: Origin::Forked(pid),
            to,
            from,
            buf: Vec::with_capacity(4096),
            tail: Arc::clone(&zygote.tail),
            drains: Vec::new(),
            echo: zygote.echo,
            killed: false,
            greeted: true,
            initialized: true,
            init,
            used: false,
            zygote: false,
            dying: Arc::clone(&zygote.dying),
        }
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        match &self.origin {
            Origin::Spawned(c) => c.id(),
            Origin::Forked(pid) => *pid as u32,
        }
    }

    /// Writes one message line.
    pub fn send(&mut self, line: &str) -> Result<(), String> {
        if self.echo {
            eprintln!("[executor {}] <- {line}", self.pid());
        }
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        self.to
            .write_all(&bytes)
            .map_err(|e| format!("cannot write to the process: {e} ({})", self.status()))
    }

    /// Reads one message line, waiting at most `watchdog` of wall-clock time.
    pub fn recv(&mut self, watchdog: Duration) -> Result<String, RecvError> {
        let start = Instant::now();
        loop {
            if let Some(i) = self.buf.iter().position(|&b| b == b'\n') {
                let rest = self.buf.split_off(i + 1);
                let mut line = std::mem::replace(&mut self.buf, rest);
                line.pop();
                let text = String::from_utf8(line)
                    .map_err(|_| RecvError::Io("a line that is not UTF-8".into()))?;
                if self.echo {
                    eprintln!("[executor {}] -> {text}", self.pid());
                }
                return Ok(text);
            }
            let left = watchdog.saturating_sub(start.elapsed());
            if left.is_zero() {
                return Err(RecvError::Watchdog(watchdog));
            }
            let mut pfd = libc::pollfd {
                fd: self.from.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            let ms = left.as_millis().min(i32::MAX as u128) as i32;
            // SAFETY: one valid pollfd.
            let r = unsafe { libc::poll(&mut pfd, 1, ms.max(1)) };
            if r < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(RecvError::Io(e.to_string()));
            }
            if r == 0 {
                continue;
            }
            let mut chunk = [0u8; 8192];
            match self.from.read(&mut chunk) {
                Ok(0) => return Err(RecvError::Closed(self.wait_status())),
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(RecvError::Io(e.to_string())),
            }
        }
    }

    /// Whether the process is still running, as a phrase for error messages.
    fn status(&mut self) -> String {
        match &mut self.origin {
            Origin::Spawned(child) => match child.try_wait() {
                Ok(Some(s)) => format!("it exited: {s}"),
                Ok(None) => "it is still running".into(),
                Err(e) => format!("its status is unknown: {e}"),
            },
            Origin::Forked(pid) if gone(*pid) => {
                "it exited (a forked process: its status is its zygote's to read)".into()
            }
            Origin::Forked(_) => "it is still running".into(),
        }
    }

    /// The exit status after the channel closed: waits a little for the process to end.
    fn wait_status(&mut self) -> String {
        for _ in 0..50 {
            match &mut self.origin {
                Origin::Spawned(child) => {
                    if let Ok(Some(s)) = child.try_wait() {
                        return format!("it exited: {s}");
                    }
                }
                Origin::Forked(pid) => {
                    if gone(*pid) {
                        return self.status();
                    }
                }
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        "it closed the channel and is still running".into()
    }

    /// The last lines the process wrote on stdout and stderr, indented, or a note that it
    /// wrote none.
    pub fn tail(&mut self) -> String {
        // Give the drains a moment to read what a dying process wrote last.
        std::thread::sleep(Duration::from_millis(20));
        let t = self.tail.lock().unwrap_or_else(|e| e.into_inner());
        if t.lines.is_empty() {
            return "  (it wrote nothing on stdout or stderr)".into();
        }
        let mut s = String::from("  its last lines:");
        for l in &t.lines {
            s.push_str("\n    ");
            s.push_str(l);
        }
        s
    }

    /// Kills the process and everything in its process group, and reaps it.
    pub fn kill(&mut self) {
        if self.killed {
            return;
        }
        self.killed = true;
        let pid = self.pid() as libc::pid_t;
        if self.zygote {
            // Its killed children first, while it is there to reap them.
            let dying = std::mem::take(&mut *self.dying.lock().unwrap_or_else(|e| e.into_inner()));
            let start = Instant::now();
            for child in dying {
                while !gone(child) && start.elapsed() < Duration::from_secs(2) {
                    std::thread::sleep(Duration::from_micros(200));
                }
            }
        }
        // SAFETY: signals the process group the process leads (started with
        // process_group(0), or a forked child in the group its zygote made for it);
        // harmless if it is gone.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
        match &mut self.origin {
            Origin::Spawned(child) => {
                let _ = child.kill();
                let _ = child.wait();
                super::leftovers::ended(pid);
            }
            Origin::Forked(pid) => {
                // SAFETY: signals one process id; harmless if it is gone.
                unsafe {
                    libc::kill(*pid, libc::SIGKILL);
                }
                super::leftovers::ended(*pid);
                // Its zygote reaps it as it ends (SIGCHLD ignored), and waits for it before
                // it is killed itself.
                let mut dying = self.dying.lock().unwrap_or_else(|e| e.into_inner());
                dying.retain(|&p| !gone(p));
                dying.push(*pid);
            }
        }
        if self.zygote {
            // Its children share these pipes: a drain ends when the last of them is gone.
            self.drains.clear();
            return;
        }
        for d in self.drains.drain(..) {
            let _ = d.join();
        }
    }
}

impl Process {
    /// Kills the process and waits until it is gone: its file locks released (a SQLite
    /// transaction it held open), as a crashed worker's restart needs before its next life
    /// opens the same files. A spawned process is waited for by [`Process::kill`] already; a
    /// forked one is reaped by its zygote, and waited for here (at most 2 s).
    pub fn kill_and_wait(&mut self) {
        self.kill();
        if let Origin::Forked(pid) = self.origin {
            let start = Instant::now();
            while !gone(pid) && start.elapsed() < Duration::from_secs(2) {
                std::thread::sleep(Duration::from_micros(50));
            }
        }
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Whether process `pid` is gone: no such process, or a zombie nobody has reaped yet.
pub(crate) fn gone(pid: libc::pid_t) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    if unsafe { libc::kill(pid, 0) } != 0 {
        return true;
    }
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |s| {
        s.rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
    })
}

/// Appends `pid` to the file `RETRYLAB_TEST_PIDS` names, when set (tests/external.rs checks
/// that no process outlives a command).
pub(crate) fn record_pid(pid: u32) {
    let Some(path) = std::env::var_os("RETRYLAB_TEST_PIDS") else {
        return;
    };
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        // One write: the executor process appends to the same file (O_APPEND keeps each
        // write whole; `writeln!` would write the digits and the newline apart).
        let _ = f.write_all(format!("{pid}\n").as_bytes());
    }
}

/// A thread that reads `from` line by line into `tail` until EOF.
fn drain(
    from: impl Read + Send + 'static,
    name: &'static str,
    tail: Arc<Mutex<Tail>>,
    echo: bool,
) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let reader = BufReader::new(from);
        for line in reader.split(b'\n') {
            let Ok(line) = line else { break };
            let text = String::from_utf8_lossy(&line).into_owned();
            if echo {
                eprintln!("[executor {name}] {text}");
            }
            tail.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(format!("{name}: {text}"));
        }
    })
}
