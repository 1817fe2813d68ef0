/**
 * Healthchecks' pinging API through the real server process: the curl lines of Healthchecks'
 * own documentation (templates/docs/bash.md, signaling_failures.md, attaching_logs.md,
 * measuring_script_run_time.md), run verbatim by `sh` with only PING_URL replaced by this
 * server's address, and a runitor-style wrapper (start, run, exit code, log body). Only
 * 127.0.0.1 is contacted.
 */
import assert from "node:assert/strict";
import { bearerApi, type RealServer, startFreshServer } from "./_real_server.ts";
import { sh } from "./_sh.ts";

async function heartbeat(s: RealServer, api: ReturnType<typeof bearerApi>, name: string) {
  const made = await api("POST", "/api/me/services", { name, check: "webhook:", interval: 60 });
  return { id: made.item.id as number, url: `${s.base}/ping/${made.item.uuid}` };
}

Deno.test({
  name: "e2e: Healthchecks' documented curl lines and a runitor-style wrapper, verbatim",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using s = await startFreshServer();
    const dir = await Deno.makeTempDir({ prefix: "hc_logs_" });
    try {
      const token = await s.signIn("ops@example.org");
      const api = bearerApi(s.base, token);
      const events = async (id: number) =>
        (await api("GET", `/api/me/services/${id}/events`)).items;
      const state = async (id: number) =>
        (await api("GET", "/api/me/services")).items.find((x: { id: number }) => x.id === id);
      /** The state once the look a failure asked for committed its alert (a second or two). */
      const offSoon = async (id: number) => {
        for (let i = 0; i < 50 && (await state(id)).state !== "off"; i++) {
          await new Promise((r) => setTimeout(r, 200));
        }
        return (await state(id)).state;
      };

      // bash.md: the plain and the silent ping.
      const a = await heartbeat(s, api, "Plain");
      let r = await sh("curl -m 10 --retry 5 PING_URL", { PING_URL: a.url });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, "OK");
      r = await sh("curl -fsS -m 10 --retry 5 -o /dev/null PING_URL", { PING_URL: a.url });
      assert.equal(r.code, 0, r.stderr);
      assert.equal((await events(a.id)).length, 2);
      assert.equal((await state(a.id)).state, "ok");

      // measuring_script_run_time.md: start and success paired by a run id from uuidgen.
      const b = await heartbeat(s, api, "Timed");
      r = await sh(
        `RID=\`uuidgen\`

# send a start ping, specify rid parameter:
curl -fsS -m 10 --retry 5 PING_URL/start?rid=$RID

# ... FIXME: run the job here ...
sleep 1

# send the success ping, use the same rid parameter:
curl -fsS -m 10 --retry 5 PING_URL?rid=$RID`,
        { PING_URL: b.url },
      );
      assert.equal(r.code, 0, r.stderr);
      const timed = await events(b.id);
      assert.deepEqual(timed.map((e: { kind: string }) => e.kind), ["success", "start"]);
      assert.equal(timed[0].rid, timed[1].rid);
      assert.ok(timed[0].duration_ms >= 1000, String(timed[0].duration_ms));

      // attaching_logs.md and bash.md: a job's output as the body, its exit status in the path.
      const c = await heartbeat(s, api, "Certbot");
      r = await sh(
        `m=$(echo "Congratulations, all renewals succeeded" 2>&1)
curl -fsS -m 10 --retry 5 --data-raw "$m" PING_URL`,
        { PING_URL: c.url },
      );
      assert.equal(r.code, 0, r.stderr);
      assert.equal((await events(c.id))[0].body, "Congratulations, all renewals succeeded");
      r = await sh(
        `m=$(sh -c 'echo "renewal failed" >&2; exit 1' 2>&1)
curl -fsS -m 10 --retry 5 --data-raw "$m" PING_URL/$?`,
        { PING_URL: c.url },
      );
      assert.equal(r.code, 0, r.stderr);
      let ev = (await events(c.id))[0];
      assert.equal(ev.kind, "fail");
      assert.equal(ev.code, 1);
      assert.equal(ev.body, "renewal failed");
      assert.equal(await offSoon(c.id), "off");
      // signaling_failures.md
      r = await sh("curl --retry 3 PING_URL/fail", { PING_URL: c.url });
      assert.equal(r.stdout, "OK");
      r = await sh("curl --retry 3 PING_URL/1", { PING_URL: c.url });
      assert.equal(r.stdout, "OK");
      r = await sh("true\ncurl --retry 3 PING_URL/$?", { PING_URL: c.url });
      assert.equal(r.stdout, "OK");
      assert.equal((await state(c.id)).state, "ok", "exit status 0 is a success");
      // attaching_logs.md: a file as the body, the last bytes of a long output.
      const log = `${dir}/certbot-renew.log`;
      await Deno.writeTextFile(log, "line\n".repeat(5000));
      r = await sh(
        `curl -fsS -m 10 --retry 5 --data-binary @${log} PING_URL/$?`,
        { PING_URL: c.url },
      );
      assert.equal(r.code, 0, r.stderr);
      ev = (await events(c.id))[0];
      assert.equal(ev.body.length, 10_240, "the first PING_BODY_LIMIT bytes are kept");

      // A runitor-style wrapper: start with a run id, run the command, its exit code and its
      // output as the body of the end signal, the log endpoint for a note.
      const d = await heartbeat(s, api, "Wrapped");
      r = await sh(
        `RID=$(uuidgen)
curl -fsS -m 10 --retry 5 -o /dev/null "PING_URL/start?rid=$RID"
OUT=$(sh -c 'echo backing up; echo 3 files; exit 3' 2>&1)
CODE=$?
curl -fsS -m 10 --retry 5 -o /dev/null --data-raw "$OUT" "PING_URL/$CODE?rid=$RID"
curl -fsS -m 10 --retry 5 -o /dev/null --data-raw "wrapper done" "PING_URL/log?rid=$RID"`,
        { PING_URL: d.url },
      );
      assert.equal(r.code, 0, r.stderr);
      const wrapped = await events(d.id);
      assert.deepEqual(wrapped.map((e: { kind: string }) => e.kind), ["log", "fail", "start"]);
      assert.equal(wrapped[1].code, 3);
      assert.equal(wrapped[1].body, "backing up\n3 files");
      assert.equal(wrapped[1].rid, wrapped[2].rid);
      assert.equal(wrapped[0].body, "wrapper done");
      assert.equal(await offSoon(d.id), "off");

      // Another account's check is not found by anyone but its UUID.
      const other = bearerApi(s.base, await s.signIn("someone@example.org"));
      const theirs = await other("GET", "/api/me/services");
      assert.equal(theirs.items.length, 0);
      const res = await fetch(`${s.base}/api/me/services/${d.id}/events`, {
        headers: { authorization: `Bearer ${await s.signIn("third@example.org")}` },
      });
      assert.equal(res.status, 404);
      await res.body?.cancel();
      r = await sh("curl -sS -o /dev/null -w '%{http_code}' -X PUT PING_URL", {
        PING_URL: d.url,
      });
      assert.equal(r.stdout, "405");
      r = await sh("curl -sS -I PING_URL", { PING_URL: d.url });
      assert.match(r.stdout, /^HTTP\/1\.1 200/);
      assert.match(r.stdout, /access-control-allow-origin: \*/i);

      // Uptime Kuma's push URL, as a Kuma push monitor shows it (curl, GET and POST).
      const k = await heartbeat(s, api, "Kuma push");
      const push = new URL(
        (await api("POST", `/api/me/services/${k.id}/push`)).push_url,
      ).pathname;
      const PUSH_URL = `${s.base}${push}`;
      r = await sh('curl -fsS "PUSH_URL?status=up&msg=OK&ping="', { PUSH_URL });
      assert.deepEqual(JSON.parse(r.stdout), { ok: true });
      r = await sh('curl -fsS -X POST "PUSH_URL?status=down&msg=disk%20full&ping=12.5"', {
        PUSH_URL,
      });
      assert.deepEqual(JSON.parse(r.stdout), { ok: true });
      const pushed = await events(k.id);
      assert.deepEqual(pushed.map((e: { kind: string }) => e.kind), ["fail", "success"]);
      assert.equal(pushed[0].status, "disk full");
      assert.equal(await offSoon(k.id), "off");
      r = await sh("curl -sS -w ' %{http_code}' PUSH_URL", {
        PUSH_URL: `${s.base}/api/push/${"x".repeat(32)}`,
      });
      assert.equal(r.stdout, '{"ok":false,"msg":"Monitor not found or not active."} 404');
      r = await sh("curl -sS -o /dev/null -w '%{http_code}' -X DELETE PUSH_URL", { PUSH_URL });
      assert.equal(r.stdout, "405");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
