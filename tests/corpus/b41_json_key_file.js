// A ticket tool that makes the agent's replan safe (b41_json_key_file.py in Node): the
// idempotency key of each requested ticket is kept in a JSON file next to the process
// (`idempotency_keys.json`, a relative path), written to a temporary file, synced and renamed
// over the old one, so that the agent's second call for the same ticket sends the key of the
// first and the provider replays it. Every created ticket is appended to a receipt log. One
// attempt per call, with a 5 s timeout (without one, undici's fetch waits 300 s for the
// headers, and the worker with it): the agent is the retry layer.

import { randomUUID } from "node:crypto";
import fs from "node:fs";
import { run, tool } from "retrylab";

const KEYS_FILE = "idempotency_keys.json";
const RECEIPT_LOG = "receipts.log";

function loadKeys() {
  try {
    return JSON.parse(fs.readFileSync(KEYS_FILE, "utf8"));
  } catch (error) {
    if (error.code === "ENOENT") return {};
    throw error;
  }
}

function saveKeys(keys) {
  const tmp = `${KEYS_FILE}.tmp`;
  const fd = fs.openSync(tmp, "w");
  try {
    fs.writeSync(fd, JSON.stringify(keys, null, 2));
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(tmp, KEYS_FILE);
}

function idempotencyKey(tenant, ref) {
  const keys = loadKeys();
  const name = `${tenant}/${ref}`;
  if (!(name in keys)) {
    keys[name] = randomUUID();
    saveKeys(keys);
  }
  return keys[name];
}

tool("create", async (args, ctx) => {
  const key = idempotencyKey(args.tenant, args.ref);
  const response = await fetch(`${ctx.provider.base_url}/v1/resources`, {
    method: "POST",
    headers: { "content-type": "application/json", "Idempotency-Key": key },
    body: JSON.stringify({ ref: args.ref, tenant: args.tenant }),
    signal: AbortSignal.timeout(5000),
  });
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  const ticket = await response.json();
  fs.appendFileSync(RECEIPT_LOG, `${args.tenant} ${args.ref} ${key} ${ticket.id}\n`);
  return ticket;
});

if (import.meta.url === `file://${process.argv[1]}`) {
  run();
}
