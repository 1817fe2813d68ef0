import assert from "node:assert/strict";
import { hmac } from "@noble/hashes/hmac.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import { runDueChecks } from "../jobs/checks.ts";
import { deliverDue as outboxJob } from "../kv/alerts/outbox.ts";
import { MINUTE } from "../lib/clock.ts";
import { systemTls } from "../lib/net.ts";
import { dumpKv, expectLog, fakeResolver, testApp } from "./_helpers.ts";
import { localHttp, loopbackConnector, makeCerts } from "./_servers.ts";

/**
 * Webhook alert channels against a real HTTPS receiver on 127.0.0.1 (a test CA; the injected
 * resolver gives the receiver's name a public address and the connector takes it to
 * 127.0.0.1), and the private-target refusal with no packet sent.
 */

interface Received {
  body: string;
  headers: Headers;
}

Deno.test("channels: signed JSON posts, test alert, alerts on off, retries, private refused", () =>
  expectLog([
    /"msg":"channel delivery failed".*"reason":"the receiver failed \(HTTP 500\)"/,
    /"msg":"channel delivery failed".*"reason":"[^"]*private/,
  ], async () => {
    const certs = await makeCerts(["hooks.test"], 30);
    const got: Received[] = [];
    let answer = 200;
    const srv = localHttp(async (req) => {
      got.push({ body: await req.text(), headers: req.headers });
      return new Response("ok", { status: answer });
    }, certs);
    try {
      const table: Record<string, string[]> = {
        "hooks.test": ["93.184.216.34"],
        "internal.test": ["10.0.0.5"],
      };
      const connector = loopbackConnector(srv.port);
      await using t = await testApp({
        connector,
        resolver: fakeResolver(table),
        tls: systemTls([certs.ca]),
      });
      t.clock.set(Date.now()); // the receiver's certificate is judged by the service's clock
      const { token } = await t.account("ops@example.org", { name: "Ops" });

      // Creation: https only, never a private target.
      const refused = [
        ["http://hooks.test/in", /https/],
        ["https://internal.test/in", /private/],
        ["https://user:pw@hooks.test/", /credentials/],
        ["not a url", /valid/],
      ] as const;
      for (const [url, msg] of refused) {
        const r = await t.req("POST", "/api/me/channels", { token, body: { name: "Chat", url } });
        assert.equal(r.status, 400, url);
        assert.equal(r.body.field, "url");
        assert.match(r.body.error, msg);
      }
      assert.deepEqual(connector.asked, [], "no packet for a refused address");
      const made = await t.req("POST", "/api/me/channels", {
        token,
        body: { name: "Team chat", url: "https://hooks.test/in?room=ops" },
      });
      assert.equal(made.status, 200, made.text);
      const ch = made.body.item;
      const secret: string = made.body.secret;
      assert.equal(ch.url_hint, "https://hooks.test");
      const list = await t.req("GET", "/api/me/channels", { token });
      assert.deepEqual(list.body.items, [ch]);
      assert.ok(!list.text.includes(secret) && !list.text.includes("room=ops"));

      const verify = (r: Received) => {
        const expected = "sha256=" + bytesToHex(
          hmac(sha256, new TextEncoder().encode(secret), new TextEncoder().encode(r.body)),
        );
        assert.equal(r.headers.get("x-signature-256"), expected);
        assert.equal(r.headers.get("content-type"), "application/json");
        return JSON.parse(r.body);
      };

      // The test button.
      const test = await t.req("POST", `/api/me/channels/${ch.id}/test`, { token });
      assert.deepEqual(test.body, { ok: true, delivered: true, status: "HTTP 200" });
      assert.equal(got.length, 1);
      const p = verify(got[0]);
      assert.equal(p.event, "test");
      assert.match(p.text, /Test alert for channel "Team chat"/);
      assert.equal(p.content, p.text, "Discord reads content");
      assert.ok(p.title && p.message, "ntfy reads title and message");
      assert.deepEqual(connector.asked, ["93.184.216.34:443"]);

      // A service chooses the channel; its off alert goes there and to mail.
      const bad = await t.req("POST", "/api/me/services", {
        token,
        body: { name: "Backup", check: "webhook:", channels: [ch.id + 1] },
      });
      assert.equal(bad.status, 400);
      assert.equal(bad.body.field, "channels");
      const svc = await t.req("POST", "/api/me/services", {
        token,
        body: { name: "Backup", check: "webhook:", interval: 5, channels: [ch.id] },
      });
      assert.deepEqual(svc.body.item.channels, [ch.id]);
      const hook = new URL(svc.body.hook_url).pathname;
      await t.req("GET", hook);
      t.clock.advance(5 * MINUTE);
      await runDueChecks(t.deps); // ok
      answer = 500; // the receiver fails first: the post stays queued
      await t.req("POST", `${hook}/fail`, { body: { status: "tar: disk full" } });
      await runDueChecks(t.deps);
      assert.match(t.mail.last("ops@example.org")!.subject, /is off/);
      assert.equal(got.length, 2);
      const off = verify(got[1]);
      assert.equal(off.event, "off");
      assert.equal(off.service.name, "Backup");
      assert.equal(off.service.state, "off");
      assert.match(off.text, /Watched service "Backup" is off/);
      assert.match(off.text, /tar: disk full/);
      assert.ok((await dumpKv(t.kv)).includes('"kind":"post"'), "kept for a retry");
      answer = 200;
      await outboxJob(t.deps);
      assert.equal(got.length, 2, "not before its backoff");
      t.clock.advance(3 * MINUTE);
      await outboxJob(t.deps);
      assert.equal(got.length, 3);
      assert.equal(got[2].body, got[1].body, "the same signed payload");
      assert.ok(!(await dumpKv(t.kv)).includes('"kind":"post"'), "delivered, gone");

      // DNS rebinding: the name now points into a private range; nothing is sent.
      table["hooks.test"] = ["10.1.2.3"];
      const asked = connector.asked.length;
      const rebound = await t.req("POST", `/api/me/channels/${ch.id}/test`, { token });
      assert.deepEqual(rebound.body, {
        ok: true,
        delivered: false,
        status: "target refused: private address",
      });
      assert.equal(connector.asked.length, asked, "no packet sent");

      // Deleting the channel takes it off the service.
      assert.equal((await t.req("DELETE", `/api/me/channels/${ch.id}`, { token })).status, 200);
      const after = await t.req("GET", "/api/me/services", { token });
      assert.deepEqual(after.body.items[0].channels, []);
      const other = await t.account("x@example.org", { name: "X" });
      assert.equal(
        (await t.req("POST", `/api/me/channels/${ch.id}/test`, { token: other.token })).status,
        404,
      );
    } finally {
      await srv.close();
    }
  }));
