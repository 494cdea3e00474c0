// A ticket tool with a retry budget (b41_budget_monotonic.py in Node): the create is retried
// until 2.5 s are spent, each attempt given what is left of the budget as its timeout (at most
// 2 s), with a 400 ms pause between attempts; an idempotency key per call, which every attempt
// carries. The budget is measured with process.hrtime.bigint(), in nanoseconds.

import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { run, tool } from "retrylab";

const BUDGET_NS = 2_500_000_000n;
const ATTEMPT_TIMEOUT_MS = 2000;
const PAUSE_MS = 400;
const RETRY_STATUSES = new Set([409, 429, 500, 502, 503, 504]);

class BudgetSpent extends Error {}

function remainingMs(deadline) {
  return Number((deadline - process.hrtime.bigint()) / 1_000_000n);
}

async function postTicket(baseUrl, ref, tenant, key) {
  const deadline = process.hrtime.bigint() + BUDGET_NS;
  for (;;) {
    try {
      const response = await fetch(`${baseUrl}/v1/resources`, {
        method: "POST",
        headers: { "content-type": "application/json", "Idempotency-Key": key },
        body: JSON.stringify({ ref, tenant }),
        signal: AbortSignal.timeout(Math.min(ATTEMPT_TIMEOUT_MS, remainingMs(deadline))),
      });
      if (!RETRY_STATUSES.has(response.status)) {
        if (!response.ok) throw new Error(`HTTP ${response.status}`);
        return await response.json();
      }
    } catch (error) {
      if (error.name !== "TimeoutError") throw error;
    }
    if (remainingMs(deadline) < PAUSE_MS) {
      throw new BudgetSpent(`no answer within ${Number(BUDGET_NS) / 1e9} s`);
    }
    await sleep(PAUSE_MS);
  }
}

tool("create", async (args, ctx) =>
  postTicket(ctx.provider.base_url, args.ref, args.tenant, randomUUID()),
);

if (import.meta.url === `file://${process.argv[1]}`) {
  run();
}
