import assert from "node:assert/strict";
import { expectLog, testApp } from "./_helpers.ts";

/** The value of one sample line of the exposition, 0 when absent. */
function sample(text: string, line: string): number {
  const found = text.split("\n").find((l) => l.startsWith(line + " "));
  return found ? Number(found.slice(line.length + 1)) : 0;
}

Deno.test("metrics: only loopback without a proxy header, or the METRICS_TOKEN bearer", async () => {
  const token = "metrics-token-0123456789";
  await using t = await testApp({ config: { metricsToken: token } });
  const cases: [string, { from?: string; headers?: Record<string, string> }, number][] = [
    ["elsewhere", { from: "192.0.2.7" }, 401],
    ["loopback", { from: "127.0.0.1" }, 200],
    ["loopback v6", { from: "::1" }, 200],
    ["through a proxy", { from: "127.0.0.1", headers: { "x-forwarded-for": "192.0.2.7" } }, 401],
    ["token", { from: "192.0.2.7", headers: { authorization: `Bearer ${token}` } }, 200],
    ["wrong token", { from: "127.0.0.1", headers: { authorization: "Bearer nope" } }, 401],
  ];
  for (const [name, o, status] of cases) {
    const r = await t.req("GET", "/metrics", o);
    assert.equal(r.status, status, name);
    if (status === 200) {
      assert.match(r.headers.get("content-type")!, /^text\/plain; version=0\.0\.4/);
    } else {assert.equal(
        r.body.error,
        "metrics need the METRICS_TOKEN bearer, or a loopback client",
      );}
  }
});

Deno.test("metrics: requests by route and status, latency, heartbeats, mail queue", () =>
  expectLog([/"msg":"mail delivery failed".*"reason":"relay down"/], async () => {
    await using t = await testApp();
    const scrape = async () => (await t.req("GET", "/metrics", { from: "127.0.0.1" })).text;
    const before = await scrape();
    const health = 'catalogue_http_requests_total{method="GET",route="/api/healthz",status="200"}';
    const unknown = 'catalogue_heartbeats_total{outcome="unknown_key"}';
    // A ping the hooks area's front takes and one its routes answer: both counted by route.
    const hook = 'catalogue_http_requests_total{method="GET",route="/api/hooks/:key",status="404"}';
    const refused = 'catalogue_heartbeats_total{outcome="refused"}';
    // Healthchecks' ping address, in its own area first in the router: counted once.
    const compat = 'catalogue_http_requests_total{method="GET",route="/ping/*",status="404"}';
    await t.req("GET", "/api/healthz");
    await t.req("GET", "/api/healthz");
    await t.req("GET", `/api/hooks/${"x".repeat(43)}`);
    await t.req("HEAD", `/api/hooks/${"x".repeat(43)}`);
    await t.req("GET", `/ping/${crypto.randomUUID()}`);
    // A route whose parameter has a pattern is labelled by the parameter's name alone.
    await t.req("GET", "/me/services/1/hook");
    t.mail.failWith = new Error("relay down");
    await t.req("POST", "/api/verify/request", { body: { email: "q@example.org", age_ok: true } });
    t.clock.advance(90_000);
    const after = await scrape();
    assert.equal(sample(after, health) - sample(before, health), 2);
    assert.equal(sample(after, unknown) - sample(before, unknown), 1);
    assert.equal(sample(after, hook) - sample(before, hook), 1);
    assert.equal(sample(after, refused) - sample(before, refused), 1);
    assert.equal(sample(after, compat) - sample(before, compat), 1);
    const bucket =
      'catalogue_http_request_duration_seconds_bucket{method="GET",route="/api/healthz",le="+Inf"}';
    assert.equal(sample(after, bucket) - sample(before, bucket), 2);
    assert.equal(sample(after, "catalogue_mail_queue_depth"), 1);
    assert.equal(sample(after, "catalogue_mail_queue_oldest_seconds"), 90);
    assert.ok(sample(after, 'catalogue_mail_total{outcome="failed"}') >= 1);
    assert.equal(sample(after, "catalogue_uploads_in_progress"), 0);
    assert.match(after, /route="\/me\/services\/:id\/hook"/);
    // No raw path and nothing the client sent appears as a label.
    assert.ok(!after.includes("xxxx") && !after.includes("q@example.org"));
    for (const l of after.split("\n").filter((l) => l && !l.startsWith("#"))) {
      assert.match(l, /^[a-z_]+(\{[^}]*\})? -?[0-9.e+-]+$/, l);
    }
  }));

Deno.test("metrics: an upload is in progress while its body is received", async () => {
  await using t = await testApp();
  const { token } = await t.account("up@example.org");
  const scrape = async () => (await t.req("GET", "/metrics", { from: "127.0.0.1" })).text;
  let send!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (send = c) });
  const answer = t.app.request("/api/me/files", {
    method: "PUT",
    headers: {
      authorization: `Bearer ${token}`,
      "content-length": "4",
      "x-file-name": "notes.txt",
      "content-type": "application/octet-stream",
    },
    body,
    duplex: "half",
  } as RequestInit, { remoteAddr: { hostname: "192.0.2.1" } });
  send.enqueue(new TextEncoder().encode("ab"));
  // The upload has begun and waits for the rest of its body.
  let during = 0;
  for (let i = 0; i < 50 && during === 0; i++) {
    during = sample(await scrape(), "catalogue_uploads_in_progress");
    if (during === 0) await new Promise((r) => setTimeout(r, 10));
  }
  assert.equal(during, 1);
  send.enqueue(new TextEncoder().encode("cd"));
  send.close();
  assert.equal((await answer).status, 201);
  assert.equal(sample(await scrape(), "catalogue_uploads_in_progress"), 0);
});
