//! A process for a worker incarnation: taken from the design (a spare, a reused one, a
//! fork), greeted (its `hello` read and checked) and initialized (`init`, `init_ok`).

use super::{External, HELLO_TIMEOUT};
use crate::design::context::ExecCtx;
use crate::external::code::ErrorCode;
use crate::external::message::{self, FromExec, Mode};
use crate::external::process::{Process, RecvError};
use crate::external::to_exec::ToExec;
use crate::external::{Hello, Shared};

impl External {
    /// A process for this incarnation, its `hello` read and `init` exchanged.
    pub(super) fn ensure_process(&mut self, ctx: &ExecCtx<'_>) -> bool {
        // Once one process of the design broke the protocol, no run of it means anything.
        if self.dead || self.shared.failed() {
            self.dead = true;
            return false;
        }
        let init = self.init();
        let init_line = init.line();
        if self.process.is_none() {
            match self.shared.take_process(&init_line) {
                Ok(p) => self.process = Some(p),
                Err(e) => {
                    self.shared
                        .fail(format!("executor {}: {e}", self.shared.name));
                    self.dead = true;
                    return false;
                }
            }
        }
        if self.process.as_ref().is_some_and(|p| p.initialized) {
            if self.hello.is_none() {
                self.hello = self.shared.hello();
            }
            return true;
        }
        let greeted = self.process.as_ref().is_some_and(|p| p.greeted);
        if !greeted {
            let Some(p) = self.process.as_mut() else {
                return false;
            };
            match read_hello(&self.shared, p) {
                Ok(h) => self.hello = Some(h),
                Err(e) => {
                    self.shared.fail(e);
                    self.dead = true;
                    self.process = None;
                    return false;
                }
            }
        } else {
            self.hello = self.shared.hello();
        }
        if !self.send(ctx, init) {
            return false;
        }
        match self.recv(ctx) {
            Some(FromExec::InitOk {}) => {
                if let Some(p) = self.process.as_mut() {
                    p.initialized = true;
                    p.init = init_line;
                }
                true
            }
            Some(m) => {
                self.fail(
                    ctx,
                    ErrorCode::TurnRule,
                    format!("expected init_ok after init, got {}", m.kind()),
                );
                false
            }
            None => false,
        }
    }
}

impl External {
    /// The `init` its process is given (the key of its zygote with fork lives).
    pub(crate) fn init(&self) -> ToExec {
        ToExec::Init {
            protocol: crate::external::PROTOCOL,
            executor: self.shared.name.clone(),
            config: self.config.clone(),
            params: self.shared.params.clone(),
            provider: self.face.describe(),
            tools: vec!["create".into(), "compensate".into()],
        }
    }
}

/// Reads a new process's `hello` and checks it.
pub fn read_hello(shared: &Shared, p: &mut Process) -> Result<Hello, String> {
    let name = &shared.name;
    let line = match p.recv(HELLO_TIMEOUT.max(shared.turn_timeout)) {
        Ok(l) => l,
        Err(e) => {
            let why = match e {
                RecvError::Closed(s) => format!("it ended before its hello: {s}"),
                RecvError::Watchdog(d) => format!("no hello within {} s", d.as_secs()),
                RecvError::Io(e) => e,
            };
            return Err(format!(
                "executor {name}: `{}` does not speak the executor protocol: {why}\n{}",
                shared.command.join(" "),
                p.tail()
            ));
        }
    };
    p.greeted = true;
    let bad = |p: &mut Process, why: String| {
        Err(format!(
            "executor {name}: its hello: {why}\n  the line: {line}\n{}",
            p.tail()
        ))
    };
    let hello = match message::parse(&line) {
        Ok(FromExec::Hello {
            protocol,
            mode,
            client,
            tools,
            assumptions,
            guarantee,
            fork,
        }) => checked_hello(protocol, &mode, &guarantee, assumptions.is_empty()).map(
            |(mode, guarantee)| Hello {
                mode,
                client,
                tools,
                assumptions,
                guarantee,
                fork,
            },
        ),
        Ok(m) => Err(format!("the first message must be hello, not {}", m.kind())),
        Err((code, why)) => Err(format!("{why} [{code}]")),
    };
    let hello = hello.or_else(|why| bad(p, why))?;
    // Its clocks and entropy below the interpreter are the simulator's only with the shim.
    super::super::shim::check_loaded(p.pid()).map_err(|why| {
        format!(
            "executor {name}: `{}`: {why}\n{}",
            shared.command.join(" "),
            p.tail()
        )
    })?;
    Ok(hello)
}

/// What a `hello` says, if this retrylab takes it: its mode and the properties of its
/// guarantee; else what is wrong with it.
fn checked_hello(
    protocol: u32,
    mode: &str,
    guarantee: &[String],
    no_assumptions: bool,
) -> Result<(Mode, Vec<crate::check::Property>), String> {
    if protocol != crate::external::PROTOCOL {
        return Err(format!(
            "protocol {protocol}; this retrylab speaks protocol 1 only [{}]",
            ErrorCode::NotSupported
        ));
    }
    let Some(mode) = Mode::parse(mode) else {
        return Err(format!(
            "mode {mode:?}; protocol 1 runs \"sync\" and \"async\" executors [{}]",
            ErrorCode::NotSupported
        ));
    };
    let mut props = Vec::new();
    for g in guarantee {
        match crate::check::Property::PLAIN
            .iter()
            .find(|p| p.def().name == g)
        {
            Some(prop) => props.push(*prop),
            None => return Err(format!("guarantee: unknown property {g:?}")),
        }
    }
    if !props.is_empty() && no_assumptions {
        return Err("a guarantee needs the assumptions it rests on".into());
    }
    Ok((mode, props))
}
