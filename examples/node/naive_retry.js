// What an agent developer writes first: fetch with a 5 s timeout and p-retry, retrying a
// timed-out create, with no idempotency key.
//
// Under retrylab (`retrylab run models/ticket_lost_response.json --executor
// naive="node examples/node/naive_retry.js"`), the lost reply of the seeds' model makes
// p-retry send the create again: the provider cannot tell the retry from a new ticket, and
// every seed ends with two tickets, as the built-in `no_dedup` design does.
//
// Nothing here is retrylab-specific but the last line and `tool(...)`: under the simulator,
// run() replaces the global fetch, the clock and setTimeout (p-retry's backoff) with virtual
// ones; in production, call() from "retrylab/production" runs the same handler with Node's
// own fetch.

import pRetry from "p-retry";
import { run, tool } from "retrylab";

async function postTicket(baseUrl, ref, tenant) {
  return pRetry(
    async () => {
      const response = await fetch(`${baseUrl}/v1/resources`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ ref, tenant }),
        signal: AbortSignal.timeout(5000),
      });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      return response.json();
    },
    {
      retries: 2, // three attempts in all
      minTimeout: 100, // then 200 ms
      factor: 2,
      // Only a timeout is retried: the one error after which the ticket may exist.
      shouldRetry: ({ error }) => error.name === "TimeoutError",
    },
  );
}

tool("create", async (args, ctx) => postTicket(ctx.provider.base_url, args.ref, args.tenant));

if (import.meta.url === `file://${process.argv[1]}`) {
  run();
}
