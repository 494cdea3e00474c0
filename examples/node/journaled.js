// A journaled executor, the port of examples/python/journaled.py: one operation record per
// authorized action, written to the durable store *before* the first send, with the
// idempotency key every retry and replan reuses.
//
// - The record (key, first send, outcome) lives in the store the simulator keeps for the
//   workers (`ctx.kv`: durable when the model's `workers.journal` is); a restarted worker
//   finds it, so the resend after a crash carries the same key and the provider replays.
// - A timeout, a 5xx or a 409 "in progress" leaves the outcome unknown: retried with the
//   same key, with exponential backoff; when the attempts run out, the call is reported
//   unknown (never failed: nothing proves that the create did not happen).
// - A key as old as the provider's retention (the model's `executor.assumed_retention_ms`,
//   less one timeout) is never sent again: the operation is escalated to a person.

import { failed, ok, run, tool, unknown } from "retrylab";

const TIMEOUT_MS = 5000;

async function getRecord(ctx, name) {
  const raw = await ctx.kv.get(name);
  return raw === null ? null : JSON.parse(raw);
}

async function putRecord(ctx, name, record) {
  await ctx.kv.put(name, JSON.stringify(record));
}

/** The model's backoff before retry `attempt` (1, 2, ...), capped. */
function backoffMs(ctx, attempt) {
  const base = (ctx.config.backoff_ms ?? 0) * 2 ** (attempt - 1);
  return Math.min(base, ctx.config.max_backoff_ms ?? 60_000);
}

tool("create", async (args, ctx) => {
  const name = `op:${args.tenant}:${args.authorization}`;
  let record = await getRecord(ctx, name);
  if (record === null) {
    record = { key: crypto.randomUUID(), first_sent_ms: null, state: "open" };
    await putRecord(ctx, name, record); // before the first send
  }
  if (record.state === "done") return ok(record.receipt);
  if (record.state === "escalated") return unknown("escalated: the key may be past the provider's retention");
  const retention = ctx.config.assumed_retention_ms;
  const attempts = Math.max(1, ctx.config.attempts ?? 1);
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const first = record.first_sent_ms;
    if (retention != null && first !== null && ctx.nowMs() - first >= retention - TIMEOUT_MS) {
      record.state = "escalated";
      await putRecord(ctx, name, record);
      ctx.state("escalated");
      return unknown("escalated: the key is as old as the provider keeps keys");
    }
    if (first === null) {
      record.first_sent_ms = ctx.nowMs();
      await putRecord(ctx, name, record);
    }
    let response = null;
    try {
      response = await fetch(`${ctx.provider.base_url}/v1/resources`, {
        method: "POST",
        headers: { "content-type": "application/json", "Idempotency-Key": record.key },
        body: JSON.stringify({ ref: args.ref, tenant: args.tenant }),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (e) {
      // A timeout or a network error: the create may have happened.
      if (e.name !== "TimeoutError" && !(e instanceof TypeError)) throw e;
    }
    const status = response?.status ?? null;
    if (status === 200 || status === 201) {
      Object.assign(record, { state: "done", receipt: (await response.json()).id });
      await putRecord(ctx, name, record);
      return ok(record.receipt);
    }
    if (status === 400 || status === 404) {
      record.state = "failed";
      await putRecord(ctx, name, record);
      return failed(`${status} ${await response.text()}`);
    }
    if (status === 412 || status === 422) {
      // The provider will not act on this key and will not say what became of the first
      // request under it: unknown, not failed.
      return unknown(`${status} ${await response.text()}`);
    }
    if (attempt < attempts) await ctx.sleep(backoffMs(ctx, attempt));
  }
  return unknown(`no answer after ${attempts} attempts`);
});

run({
  assumptions: [
    "atomic_dedup",
    "one_key_scope",
    "in_flight_refused_or_held",
    "every_outcome_stored",
    "retention_covers_retries",
    "mismatch_refused_or_original",
    "durable_journal",
  ],
  guarantee: ["no_duplicate", "no_merged_repeat", "no_wrong_receipt"],
});
