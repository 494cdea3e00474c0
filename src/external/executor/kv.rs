//! The store requests of a process (`kv`, docs/executor-protocol.md section 4), carried out
//! on the run's key-value store and answered inside the turn with `kv_ok`.

use super::External;
use crate::design::context::ExecCtx;
use crate::external::code::ErrorCode;
use crate::external::message::KvOp;
use crate::external::to_exec::ToExec;

/// A `kv` message's fields.
pub(super) struct KvRequest {
    pub msg_id: u64,
    pub op: KvOp,
    pub key: Option<String>,
    pub value: Option<String>,
    pub expect_version: Option<u64>,
    pub prefix: Option<String>,
}

/// What an operation puts in its `kv_ok` beside `in_reply_to` and `now_ms`.
#[derive(Default)]
struct Fields {
    ok: Option<bool>,
    value: Option<Option<String>>,
    version: Option<u64>,
    entries: Option<Vec<(String, String, u64)>>,
}

impl External {
    /// Carries out a store request; its answer, or `None` after a protocol error.
    pub(super) fn kv(&mut self, ctx: &mut ExecCtx<'_>, req: KvRequest) -> Option<ToExec> {
        let fields = match req.op {
            KvOp::Get => {
                let key = self.required(ctx, req.op, "key", req.key)?;
                let e = ctx.journal_ref().kv().get(&key);
                Fields {
                    value: Some(e.map(|e| e.value.clone())),
                    version: Some(e.map_or(0, |e| e.version)),
                    ..Fields::default()
                }
            }
            KvOp::Put => {
                let key = self.required(ctx, req.op, "key", req.key)?;
                let value = self.required(ctx, req.op, "value", req.value)?;
                self.kv_put(ctx, key, value)
            }
            KvOp::Cas => {
                let key = self.required(ctx, req.op, "key", req.key)?;
                let value = self.required(ctx, req.op, "value", req.value)?;
                let Some(expect) = req.expect_version else {
                    self.fail(
                        ctx,
                        ErrorCode::Malformed,
                        "kv cas: the field \"expect_version\" is required".into(),
                    );
                    return None;
                };
                self.kv_cas(ctx, key, expect, value)
            }
            KvOp::Delete => {
                let key = self.required(ctx, req.op, "key", req.key)?;
                let existed = ctx.journal().kv_mut().delete(&key);
                let name = self.shared.name.clone();
                ctx.note_about(None, self.busy, || format!("{name}: store {key} deleted"));
                Fields {
                    ok: Some(existed),
                    ..Fields::default()
                }
            }
            KvOp::List => {
                let prefix = req.prefix.unwrap_or_default();
                let entries = ctx
                    .journal_ref()
                    .kv()
                    .list(&prefix)
                    .map(|(k, e)| (k.clone(), e.value.clone(), e.version))
                    .collect();
                Fields {
                    entries: Some(entries),
                    ..Fields::default()
                }
            }
        };
        Some(ToExec::KvOk {
            in_reply_to: req.msg_id,
            ok: fields.ok.unwrap_or(true),
            value: fields.value,
            version: fields.version,
            entries: fields.entries,
            now_ms: ctx.now(),
        })
    }

    /// A field the operation needs; `None` after the protocol error of its absence.
    fn required(
        &mut self,
        ctx: &ExecCtx<'_>,
        op: KvOp,
        what: &str,
        v: Option<String>,
    ) -> Option<String> {
        if v.is_none() {
            self.fail(
                ctx,
                ErrorCode::Malformed,
                format!("kv {op:?}: the field {what:?} is required"),
            );
        }
        v
    }

    fn kv_put(&mut self, ctx: &mut ExecCtx<'_>, key: String, value: String) -> Fields {
        let (name, worker) = (self.shared.name.clone(), ctx.worker());
        let shown = value.clone();
        let v = ctx.journal().kv_mut().put(&key, value, worker);
        ctx.note_about(None, self.busy, || {
            format!("{name}: store {key} = {shown} (version {v})")
        });
        Fields {
            version: Some(v),
            ..Fields::default()
        }
    }

    /// A compare-and-set: written only if the entry's version is `expect`; the entry as it
    /// stands after, either way.
    fn kv_cas(&mut self, ctx: &mut ExecCtx<'_>, key: String, expect: u64, value: String) -> Fields {
        let (name, worker) = (self.shared.name.clone(), ctx.worker());
        let shown = value.clone();
        let (ok, e) = ctx.journal().kv_mut().cas(&key, expect, value, worker);
        let (val, ver) = e.map_or((None, 0), |e| (Some(e.value.clone()), e.version));
        let what = if ok { "written" } else { "refused" };
        ctx.note_about(None, self.busy, || {
            format!("{name}: store {key} = {shown} if version {expect}: {what} (version {ver})")
        });
        Fields {
            ok: Some(ok),
            value: Some(val),
            version: Some(ver),
            entries: None,
        }
    }
}
