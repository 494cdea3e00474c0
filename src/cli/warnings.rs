//! Warnings on stderr: a model value that makes a component inert or a figure meaningless
//! ([`crate::design::inert`]), a design whose guarantee does not apply to the model (one of
//! its contract assumptions does not hold), and a scripted fault that never fired. They
//! never change stdout or the exit code.

use crate::model::{Fault, Model};

/// One line per misconfiguration of `model` ([`crate::design::inert`]): the field, its
/// value, why it misleads, and a value to use.
pub(super) fn inert(model: &Model) -> Vec<String> {
    crate::design::inert::inert(model)
        .into_iter()
        .map(|i| format!("warning: {}: {}: {}", model.name, i.path, i.message))
        .collect()
}

/// The scripted faults of `model`, each as [`Fault::describe`] names it: what the fault warnings
/// print (a shard's partial result carries them, so that a merge needs no model file).
pub(super) fn described_faults(model: &Model) -> Vec<String> {
    model.faults.iter().map(Fault::describe).collect()
}

/// One line per scripted fault of the model named `model` (indices in `unfired` of its
/// faults, `described` as [`described_faults`] gives them) that fired on none of `seeds`
/// seeds of `design`.
pub(super) fn faults(
    model: &str,
    described: &[String],
    design: &str,
    unfired: &[usize],
    seeds: u64,
) -> Vec<String> {
    unfired
        .iter()
        .filter_map(|&i| described.get(i))
        .map(|f| {
            format!(
                "warning: {model}: fault {f} never fired in {seeds} seed{} of design {design}",
                if seeds == 1 { "" } else { "s" }
            )
        })
        .collect()
}

/// Prints `lines` on stderr.
pub(super) fn print(ctx: &super::Ctx, lines: &[String]) {
    for line in lines {
        ctx.eprintln(line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::CrashPoint;

    #[test]
    fn faults_are_described_as_the_model_names_them() {
        let crash = Fault::CrashWorker {
            attempt: 7,
            point: CrashPoint::AfterSend,
            worker: None,
        };
        assert_eq!(
            crash.describe(),
            "crash_worker {attempt: 7, point: after_send}"
        );
        let crash = Fault::CrashWorker {
            attempt: 2,
            point: CrashPoint::AfterReply,
            worker: Some(1),
        };
        assert_eq!(
            crash.describe(),
            "crash_worker {attempt: 2, point: after_reply, worker: 1}"
        );
        assert_eq!(
            Fault::DropReply { attempt: 3 }.describe(),
            "drop_reply {attempt: 3}"
        );
    }
}
