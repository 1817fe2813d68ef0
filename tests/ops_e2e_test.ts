/**
 * Operating the real server (main.ts as a child process): start-up refusals, SIGTERM under
 * load, and the logs of a whole session, which must never hold an address, a name, a token,
 * a hook key, a file name or a text.
 */
import assert from "node:assert/strict";
import { startFreshServer } from "./_real_server.ts";
import { ROOT, serverEnv, spawnService, taskArgs } from "./_server.ts";

/** Runs `deno task start` with `env` and answers its exit code and output (it must exit). */
async function failedStart(env: Record<string, string>) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: await taskArgs("start"),
    cwd: ROOT,
    env: serverEnv({ HOSTNAME: "127.0.0.1", PORT: "0", ...env }),
    stdin: "null",
    signal: AbortSignal.timeout(30_000),
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

Deno.test("ops: a bad variable and an unreadable KV each exit 1 with one line", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const bad = await failedStart({ PORT: "eighty", KV_PATH: `${dir}/kv.sqlite3` });
    assert.equal(bad.code, 1);
    assert.equal(bad.stdout, "");
    assert.equal(
      bad.stderr,
      "cannot start: invalid configuration: PORT: must be a port number from 0 to 65535\n",
    );

    await Deno.writeTextFile(`${dir}/not-a-db`, "this is no SQLite file ".repeat(100));
    for (const kvPath of [`${dir}/not-a-db`, dir]) {
      const r = await failedStart({ KV_PATH: kvPath });
      assert.equal(r.code, 1, r.stderr);
      assert.match(
        r.stderr,
        /^cannot start: KV_PATH: [^\n]+ is not a (KV database|file) \(check the path\)\n$/,
        r.stderr,
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ops: a KV_PATH whose folder does not exist is refused; the first line says new or existing; a busy port exits 1 with one line, creating nothing", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // A typo in the folder: refused with one line naming the variable, nothing created.
    const typo = `${dir}/no-such/dir/kv.sqlite3`;
    const r = await failedStart({ KV_PATH: typo });
    assert.equal(r.code, 1, r.stderr);
    assert.equal(r.stdout, "");
    assert.equal(
      r.stderr,
      `cannot start: KV_PATH: the folder ${dir}/no-such/dir does not exist ` +
        "(check the path, or create the folder)\n",
    );
    await assert.rejects(Deno.stat(`${dir}/no-such`), Deno.errors.NotFound);

    const kvPath = `${dir}/kv.sqlite3`;
    const firstLine = (out: string) => JSON.parse(out.split("\n")[0]).msg;
    {
      await using first = await spawnService(kvPath);
      assert.equal(firstLine(first.stdout.text), `created a new KV at ${kvPath}`);
      // The port it holds is busy for a second server.
      const port = new URL(first.url).port;
      const busy = await failedStart({ PORT: port, KV_PATH: `${dir}/kv2.sqlite3` });
      assert.equal(busy.code, 1);
      // One line, before anything is opened: no KV line, no KV file.
      assert.equal(busy.stdout, "");
      assert.equal(
        busy.stderr,
        `cannot start: port ${port} on 127.0.0.1 is already in use (another server running?)\n`,
      );
      await assert.rejects(Deno.stat(`${dir}/kv2.sqlite3`), Deno.errors.NotFound);
      // The first server still answers.
      const health = await fetch(`${first.url}/api/healthz`);
      assert.equal(health.status, 200, await health.text());
    }
    {
      await using s = await spawnService(kvPath);
      assert.match(
        firstLine(s.stdout.text),
        new RegExp(`^opened the existing KV at ${kvPath} \\(schema level [1-9]\\d*\\)$`),
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("ops: SIGTERM mid-load finishes what is in flight; no acknowledged beat is lost", async () => {
  await using s = await startFreshServer({ LOG_LEVEL: "info" });
  const token = await s.signIn("term@example.org");
  const made = await fetch(`${s.base}/api/me/services`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "Backup", check: "webhook:", interval: 5 }),
  });
  const service = await made.json();
  assert.equal(made.status, 200);
  const hook = new URL(service.hook_url).pathname;

  // Eight clients ping as fast as they can, each with its own address (under the rate limit).
  let stop = false;
  const acked: { i: number; received: string }[] = [];
  let n = 0;
  const client = async () => {
    while (!stop) {
      const i = ++n;
      try {
        const r = await fetch(`${s.base}${hook}?status=${i}`, { method: "POST" });
        const body = await r.json();
        if (r.status === 200) acked.push({ i, received: body.received });
      } catch {
        return; // the server stopped taking connections
      }
    }
  };
  const clients = Array.from({ length: 8 }, client);
  while (acked.length < 50) await new Promise((r) => setTimeout(r, 10));
  const sent = performance.now();
  Deno.kill(s.pid, "SIGTERM");
  const status = await s.exited;
  const took = performance.now() - sent;
  stop = true;
  await Promise.all(clients);
  assert.ok(took < 5_000, `exited after ${took} ms`);
  assert.equal(status.code, 0);
  assert.match(s.output(), /"msg":"stopping","signal":"SIGTERM"/);
  assert.match(s.output(), /"msg":"stopped"/);

  // The last acknowledged beat is the one stored (beats of one batch: the last one wins).
  const kv = await Deno.openKv(s.kvPath);
  try {
    const beats = [];
    for await (const e of kv.list<{ at: number; status: string }>({ prefix: ["beats"] })) {
      beats.push(e.value);
    }
    assert.equal(beats.length, 1);
    const last = Math.max(...acked.map((a) => Date.parse(a.received)));
    assert.ok(beats[0].at >= last, `stored ${beats[0].at}, last acknowledged ${last}`);
  } finally {
    kv.close();
  }
});

Deno.test("ops: a whole session's logs name no address, name, token, key, file name or text", async () => {
  await using s = await startFreshServer({ LOG_LEVEL: "debug" });
  const email = "leaky.person@example.org";
  const token = await s.signIn(email);
  const auth = { authorization: `Bearer ${token}` };
  const json = { ...auth, "content-type": "application/json" };
  const secrets = [email, "leaky.person", token];
  const call = async (path: string, init: RequestInit = {}) => {
    const r = await fetch(`${s.base}${path}`, init);
    const text = await r.text();
    // Paths outside /api answer HTML pages (web/).
    const isJson = r.headers.get("content-type")?.includes("json");
    return { status: r.status, body: text && isJson ? JSON.parse(text) : text || null };
  };

  const named = await call("/api/me", {
    method: "PATCH",
    headers: json,
    body: JSON.stringify({ name: "Ottilie Quarkwhistle" }),
  });
  assert.equal(named.status, 200);
  secrets.push("Ottilie", "Quarkwhistle");
  const svc = await call("/api/me/services", {
    method: "POST",
    headers: json,
    body: JSON.stringify({ name: "Zebrafinch backups", check: "webhook:", interval: 5 }),
  });
  assert.equal(svc.status, 200);
  const hook = new URL(svc.body.hook_url).pathname;
  const key = hook.split("/").pop()!;
  secrets.push("Zebrafinch", key);
  assert.equal(
    (await call(`${hook}?status=mauve%20walrus%20done`, { method: "POST" })).status,
    200,
  );
  assert.equal((await call(`/api/hooks/${"k".repeat(43)}`)).status, 404);
  secrets.push("mauve walrus", "k".repeat(43));
  const file = await call("/api/me/files", {
    method: "PUT",
    headers: { ...auth, "X-File-Name": encodeURIComponent("marmalade-plans.txt") },
    body: "the quick brown fox jumps over",
  });
  assert.equal(file.status, 201, JSON.stringify(file.body));
  secrets.push("marmalade", "quick brown fox");
  const bogus = "Zq".repeat(20);
  assert.equal((await call(`/api/verify?token=${bogus}`)).status, 410);
  assert.equal((await call(`/nowhere/${bogus}x`)).status, 404);
  secrets.push(bogus);
  await new Promise((r) => setTimeout(r, 100)); // buffered log lines reach the output

  // Mails are printed to standard output without a transport (CONTRACT.md), and a new server
  // prints its first-run owner link for the person at the console: those blocks are messages to
  // a person, not the log; every other line is a JSON log line.
  const logs = s.output().replace(/--- (mail|owner link)\n[^]*?\n--- end\n/g, "");
  const lines = logs.split("\n").filter(Boolean).map((l) => JSON.parse(l));
  const requests = lines.filter((l) => l.msg === "request");
  assert.ok(requests.length >= 9, logs);
  assert.ok(requests.some((l) => l.route === "/api/hooks/:key" && l.status === 200));
  assert.ok(requests.some((l) => l.route === "/api/hooks/:key" && l.status === 404));
  assert.ok(requests.some((l) => l.route === "unmatched" && l.status === 404));
  for (const l of requests) {
    assert.deepEqual(Object.keys(l), ["t", "level", "msg", "method", "route", "status", "ms"]);
  }
  for (const secret of secrets) assert.ok(!logs.includes(secret), `${secret} in ${logs}`);
  assert.ok(!/@/.test(logs), logs);
});
