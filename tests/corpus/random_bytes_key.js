// An idempotency key per tool call from Node's crypto.randomBytes, fetch with a 5 s timeout
// and p-retry: p-retry's resend after a timeout carries the key of the first send.

import { randomBytes } from "node:crypto";
import pRetry from "p-retry";
import { run, tool } from "retrylab";

function newKey() {
  return randomBytes(16).toString("hex");
}

async function postTicket(baseUrl, ref, tenant, key) {
  return pRetry(
    async () => {
      const response = await fetch(`${baseUrl}/v1/resources`, {
        method: "POST",
        headers: { "content-type": "application/json", "Idempotency-Key": key },
        body: JSON.stringify({ ref, tenant }),
        signal: AbortSignal.timeout(5000),
      });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      return response.json();
    },
    {
      retries: 2,
      minTimeout: 100,
      factor: 2,
      shouldRetry: ({ error }) => error.name === "TimeoutError",
    },
  );
}

tool("create", async (args, ctx) =>
  postTicket(ctx.provider.base_url, args.ref, args.tenant, newKey()),
);

if (import.meta.url === `file://${process.argv[1]}`) {
  run();
}
