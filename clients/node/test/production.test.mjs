// The production path: the same handlers outside the simulator, with Node's fetch and a real store.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as http from "node:http";
import * as os from "node:os";
import * as path from "node:path";

import { Definite, failed, fromReturn, ok, tool, underSimulator } from "../dist/index.js";
import { call, FileStore, MemoryStore } from "../dist/production.js";

let posts = 0;
const server = http.createServer((req, res) => {
  let body = "";
  req.on("data", (d) => (body += d));
  req.on("end", () => {
    posts += 1;
    const { ref } = JSON.parse(body);
    res.writeHead(ref === "bad" ? 400 : 201, { "content-type": "application/json" });
    res.end(JSON.stringify(ref === "bad" ? { error: "rejected" } : { id: `res_${posts}`, ref, key: req.headers["idempotency-key"] }));
  });
});

// The handler as an executor module would register it.
tool("create", async (args, ctx) => {
  let key = await ctx.kv.get(`key:${args.ref}`);
  if (key === null) {
    key = crypto.randomUUID();
    const won = await ctx.kv.cas(`key:${args.ref}`, 0, key);
    key = won.ok ? key : won.value;
  }
  const r = await fetch(`${ctx.provider.base_url}/v1/resources`, {
    method: "POST",
    headers: { "idempotency-key": key },
    body: JSON.stringify({ ref: args.ref }),
    signal: AbortSignal.timeout(5000),
  });
  if (r.status === 400) throw new Definite(`400 ${await r.text()}`);
  const body = await r.json();
  ctx.receipt = body.id;
  await ctx.sleep(1);
  ctx.log(`created ${body.id}`);
  return body;
});

test("a handler runs with Node's fetch, a real clock and the given store", async (t) => {
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => server.close());
  const base_url = `http://127.0.0.1:${server.address().port}`;
  assert.equal(underSimulator(), false);
  const store = new MemoryStore();
  const lines = [];
  const r1 = await call("create", { ref: "r1" }, { store, provider: { base_url }, log: (l) => lines.push(l) });
  assert.equal(r1.outcome, "ok");
  assert.equal(r1.receipt, "res_1");
  assert.equal(r1.value.ref, "r1");
  const key = r1.value.key;
  assert.match(key, /^[0-9a-f-]{36}$/);
  assert.deepEqual(await store.getVersioned("key:r1"), { value: key, version: 1 });
  // the same ref reuses the stored key
  const r2 = await call("create", { ref: "r1" }, { store, provider: { base_url }, log: () => {} });
  assert.equal(r2.value.key, key);
  assert.match(lines[0], /^retrylab p\d+: created res_1$/);
  const bad = await call("create", { ref: "bad" }, { store, provider: { base_url }, log: () => {} });
  assert.equal(bad.outcome, "failed");
  assert.equal(bad.detail, '400 {"error":"rejected"}');
  assert.ok(bad.error instanceof Definite);
  // a transport error is unknown, never failed
  const closed = http.createServer();
  await new Promise((resolve) => closed.listen(0, "127.0.0.1", resolve));
  const port = closed.address().port;
  await new Promise((resolve) => closed.close(resolve));
  const down = await call("create", { ref: "r2" }, { store, provider: { base_url: `http://127.0.0.1:${port}` }, log: () => {} });
  assert.equal(down.outcome, "unknown");
  assert.match(down.detail, /^TypeError: fetch failed \(caused by Error: connect ECONNREFUSED 127\.0\.0\.1:\d+\)$/);
  await assert.rejects(call("nope", {}), /no handler for tool "nope"/);
});

test("the stores: the simulator's versions, cas, delete and list in key order", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "retrylab-node-"));
  try {
    for (const store of [new MemoryStore(), new FileStore(path.join(dir, "journal.json"))]) {
      assert.deepEqual(await store.getVersioned("a"), { value: null, version: 0 });
      assert.equal(await store.put("op:b", "1"), 1);
      assert.equal(await store.put("op:a", "2"), 2);
      assert.deepEqual(await store.cas("op:a", 1, "x"), { ok: false, value: "2", version: 2 });
      assert.deepEqual(await store.cas("op:a", 2, "3"), { ok: true, value: "3", version: 3 });
      assert.deepEqual(await store.cas("lease", 0, "w0"), { ok: true, value: "w0", version: 4 });
      assert.equal(await store.delete("lease"), true);
      assert.equal(await store.delete("lease"), false);
      assert.equal(await store.put("z", "9"), 5); // versions are never reused after a delete
      assert.deepEqual(await store.list("op:"), [
        ["op:a", "3", 3],
        ["op:b", "1", 1],
      ]);
      await assert.rejects(store.put("k", 1), /a store value is a string/);
    }
    // the file store survives a new instance (another process)
    const again = new FileStore(path.join(dir, "journal.json"));
    assert.equal(await again.get("op:a"), "3");
    assert.equal(fs.existsSync(path.join(dir, "journal.json.lock")), false);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("claims: explicit results keep their receipt or take ctx.receipt", () => {
  assert.equal(fromReturn(ok(), "res_1", "create").receipt, "res_1");
  assert.equal(fromReturn(ok("res_2"), "res_1", "create").receipt, "res_2");
  assert.equal(fromReturn({ id: "x" }, null, "create").outcome, "ok");
  assert.equal(fromReturn(new Map(), null, "create").outcome, "unknown");
  assert.equal(fromReturn(failed("no"), "res_1", "create").receipt, null);
  assert.throws(() => failed(3), /a detail is a string/);
});
