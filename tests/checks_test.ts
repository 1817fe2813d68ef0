import assert from "node:assert/strict";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { runCheck } from "../lib/checks/mod.ts";
import { systemConnector, systemTls } from "../lib/net.ts";
import { fakeResolver, testApp } from "./_helpers.ts";
import {
  type Certs,
  closedPort,
  localHttp,
  localTls,
  loopbackConnector,
  makeCerts,
} from "./_servers.ts";

const web = (req: Request) => {
  const path = new URL(req.url).pathname;
  const hop = path.match(/^\/hop\/([0-9]+)$/);
  if (hop) {
    const n = Number(hop[1]);
    return new Response(null, {
      status: 302,
      headers: { location: n > 1 ? `/hop/${n - 1}` : "/ok" },
    });
  }
  if (path === "/ok") return new Response("fine");
  if (path === "/fail") return new Response("broken", { status: 503 });
  if (path === "/to-private") {
    return new Response(null, { status: 301, headers: { location: "http://internal.test/" } });
  }
  if (path === "/to-loopback") {
    return new Response(null, { status: 302, headers: { location: "http://127.0.0.1:9/" } });
  }
  if (path === "/to-public") {
    return new Response(null, { status: 302, headers: { location: "http://other.test/ok" } });
  }
  return new Response("no", { status: 404 });
};

async function create(t: Awaited<ReturnType<typeof testApp>>, token: string, check: string) {
  const r = await t.req("POST", "/api/me/services", { token, body: { name: "Probe", check } });
  assert.equal(r.status, 200, r.text);
  return r.body.item;
}

Deno.test("checks: url against a local server: ok, 4xx warns, 5xx off, redirects", async () => {
  const srv = localHttp(web);
  try {
    await using t = await testApp({ connector: systemConnector });
    const { token } = await t.account("owner@example.org", { name: "Owner", roles: ["owner"] });
    const base = `url:http://127.0.0.1:${srv.port}`;
    const ok = await create(t, token, `${base}/ok`);
    assert.equal(ok.state, "ok");
    assert.match(ok.status, /^HTTP 200 in [0-9]+ ms$/);
    assert.equal(typeof ok.ms, "number");
    assert.equal(ok.target_hint, `http://127.0.0.1:${srv.port}`);
    assert.equal(ok.checked, new Date(t.clock.now()).toISOString());
    assert.equal((await create(t, token, `${base}/nothing`)).state, "warn");
    const down = await create(t, token, `${base}/fail`);
    assert.equal(down.state, "off");
    assert.match(down.status, /HTTP 503/);
    const five = await create(t, token, `${base}/hop/5`);
    assert.equal(five.state, "ok");
    assert.match(five.status, /after 5 redirects/);
    const six = await create(t, token, `${base}/hop/6`);
    assert.equal(six.state, "off");
    assert.equal(six.status, "more than 5 redirects");
    const closed = await create(t, token, `url:http://127.0.0.1:${closedPort()}/`);
    assert.equal(closed.state, "off");
    assert.equal(closed.status, "connection refused");
  } finally {
    await srv.close();
  }
});

Deno.test("checks: a redirect to a private address is refused; each hop is checked", async () => {
  const srv = localHttp(web);
  try {
    const connector = loopbackConnector(srv.port);
    await using t = await testApp({
      connector,
      resolver: fakeResolver({
        "public.test": ["93.184.216.34"],
        "other.test": ["8.8.8.8"],
        "internal.test": ["10.0.0.5"],
      }),
    });
    const { token } = await t.account("user@example.org", { name: "User" });
    const priv = await create(t, token, "url:http://public.test/to-private");
    assert.equal(priv.state, "off");
    assert.equal(priv.status, "redirect to a refused address");
    const loop = await create(t, token, "url:http://public.test/to-loopback");
    assert.equal(loop.status, "redirect to a refused address");
    assert.deepEqual(connector.asked, ["93.184.216.34:80", "93.184.216.34:80"]);
    const pub = await create(t, token, "url:http://public.test/to-public");
    assert.equal(pub.state, "ok");
    assert.deepEqual(connector.asked.slice(2), ["93.184.216.34:80", "8.8.8.8:80"]);
  } finally {
    await srv.close();
  }
});

Deno.test("checks: DNS rebinding: every run validates again and connects to that address", async () => {
  const srv = localHttp(web);
  try {
    const connector = loopbackConnector(srv.port);
    const table: Record<string, string[]> = { "flip.test": ["93.184.216.34"] };
    await using t = await testApp({ connector, resolver: fakeResolver(table) });
    const { token } = await t.account("user@example.org", { name: "User" });
    const item = await create(t, token, "url:http://flip.test/ok");
    assert.equal(item.state, "ok");
    assert.deepEqual(connector.asked, ["93.184.216.34:80"]);
    table["flip.test"] = ["169.254.169.254"];
    const r = await t.req("POST", `/api/me/services/${item.id}/check`, { token });
    assert.equal(r.status, 200);
    assert.equal(r.body.item.state, "off");
    assert.equal(r.body.item.status, "target refused: private address");
    assert.deepEqual(connector.asked, ["93.184.216.34:80"], "no connection to the new address");
  } finally {
    await srv.close();
  }
});

Deno.test("checks: tcp open port is ok, a closed port is off", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const accepted = (async () => {
    const c = await listener.accept();
    c.close();
  })();
  try {
    await using t = await testApp({ connector: systemConnector });
    const { token } = await t.account("owner@example.org", { name: "Owner", roles: ["owner"] });
    const port = (listener.addr as Deno.NetAddr).port;
    const open = await create(t, token, `tcp:127.0.0.1:${port}`);
    assert.equal(open.state, "ok");
    assert.match(open.status, /^port open/);
    await accepted;
    const shut = await create(t, token, `tcp:127.0.0.1:${closedPort()}`);
    assert.equal(shut.state, "off");
    assert.equal(shut.status, "connection refused");
  } finally {
    listener.close();
  }
});

Deno.test("checks: tls certificate: valid, expiring soon, wrong name, untrusted", async () => {
  const good = await makeCerts(["svc.test"], 90);
  const soon = await makeCerts(["svc.test"], 10);
  const a = localTls(good);
  const b = localTls(soon);
  try {
    const resolver = fakeResolver({ "svc.test": ["127.0.0.1"], "other.test": ["127.0.0.1"] });
    await using t = await testApp({
      connector: systemConnector,
      resolver,
      tls: systemTls([good.ca, soon.ca]),
    });
    // Certificates are judged by the service's clock; these were made just now.
    t.clock.set(Date.now());
    const { token } = await t.account("owner@example.org", { name: "Owner", roles: ["owner"] });
    const ok = await create(t, token, `tls:svc.test:${a.port}`);
    assert.equal(ok.state, "ok", ok.status);
    assert.match(ok.status, /certificate valid, expires in (89|90) days/);
    const warn = await create(t, token, `tls:svc.test:${b.port}`);
    assert.equal(warn.state, "warn");
    assert.match(warn.status, /certificate expires in (9|10) days/);
    const name = await create(t, token, `tls:other.test:${a.port}`);
    assert.equal(name.state, "off");
    assert.equal(name.status, "certificate is not valid for this name");

    await using u = await testApp({ connector: systemConnector, resolver, tls: systemTls() });
    u.clock.set(Date.now());
    const owner2 = await u.account("owner@example.org", { name: "Owner", roles: ["owner"] });
    const untrusted = await create(u, owner2.token, `tls:svc.test:${a.port}`);
    assert.equal(untrusted.state, "off");
    assert.equal(untrusted.status, "certificate not trusted");
  } finally {
    await a.close();
    await b.close();
  }
});

/** An app whose checks reach `mcp.test` on 127.0.0.1 over TLS trusted through the test CA. */
function mcpApp(certs: Certs) {
  return testApp({
    connector: systemConnector,
    resolver: fakeResolver({ "mcp.test": ["127.0.0.1"] }),
    tls: systemTls([certs.ca]),
  });
}

function mcpHandler(json: boolean, name = "test-mcp") {
  return async (req: Request) => {
    const server = new McpServer({ name, version: "1.2.3" });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: json,
    });
    await server.connect(transport);
    return await transport.handleRequest(req);
  };
}

Deno.test("checks: mcp against a real MCP server over streamable HTTP (SSE and JSON)", async () => {
  const certs = await makeCerts(["mcp.test"], 90);
  const sse = localHttp(mcpHandler(false), certs);
  const json = localHttp(mcpHandler(true), certs);
  const plain = localHttp(() => new Response("hello"), certs);
  try {
    await using t = await mcpApp(certs);
    const { token } = await t.account("owner@example.org", { name: "Owner", roles: ["owner"] });
    for (const srv of [sse, json]) {
      const item = await create(t, token, `mcp:https://mcp.test:${srv.port}/mcp`);
      assert.equal(item.state, "ok", item.status);
      assert.match(item.status, /^MCP test-mcp 1\.2\.3, protocol [0-9-]+, in [0-9]+ ms$/);
      assert.equal(item.kind, "mcp");
    }
    const not = await create(t, token, `mcp:https://mcp.test:${plain.port}/mcp`);
    assert.equal(not.state, "off");
    assert.equal(not.status, "no MCP answer to initialize");
  } finally {
    await sse.close();
    await json.close();
    await plain.close();
  }
});

Deno.test("checks: an answer slower than 5 s warns; none within the limit is off", async () => {
  // The check's own clock advances only when the server answers: 6 s pass, no one waits.
  let wall = 0;
  const srv = localHttp(() => {
    wall += 6_000;
    return new Response("late");
  });
  // Accepts connections and never answers.
  const mute = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  (async () => {
    for await (const c of mute) held.push(c);
  })();
  try {
    await using t = await testApp({ connector: systemConnector });
    const timing = { now: () => wall, limitMs: 10_000 };
    const slow = await runCheck(t.deps, `url:http://127.0.0.1:${srv.port}/`, true, timing);
    assert.equal(slow.state, "warn");
    assert.equal(slow.status, "HTTP 200 in 6000 ms (slow)");
    assert.equal(slow.ms, 6000);
    const port = (mute.addr as Deno.NetAddr).port;
    const started = performance.now();
    const none = await runCheck(t.deps, `url:http://127.0.0.1:${port}/`, true, {
      now: () => performance.now(),
      limitMs: 150,
    });
    assert.equal(none.state, "off");
    assert.equal(none.status, "no answer within 0.15 s");
    assert.ok(performance.now() - started < 5_000, "the limit ends the check");
  } finally {
    mute.close();
    for (const c of held) c.close();
    await srv.close();
  }
});

/** A stateful MCP server: every initialize opens a session, kept until DELETE ends it. */
function statefulMcp() {
  const opened: string[] = [];
  const ended: string[] = [];
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  const handler = async (req: Request) => {
    const sid = req.headers.get("mcp-session-id");
    if (sid) {
      const transport = sessions.get(sid);
      if (!transport) return new Response("unknown session", { status: 404 });
      if (req.method === "DELETE") ended.push(sid);
      return await transport.handleRequest(req);
    }
    const server = new McpServer({ name: "stateful", version: "2.0.0" });
    const transport: WebStandardStreamableHTTPServerTransport =
      new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => crypto.randomUUID(),
        enableJsonResponse: true,
        onsessioninitialized: (id: string) => {
          sessions.set(id, transport);
          opened.push(id);
        },
      });
    await server.connect(transport);
    return await transport.handleRequest(req);
  };
  return { handler, opened, ended };
}

Deno.test("checks: mcp ends the session a stateful server opens", async () => {
  const certs = await makeCerts(["mcp.test"], 90);
  const mcp = statefulMcp();
  const srv = localHttp(mcp.handler, certs);
  try {
    await using t = await mcpApp(certs);
    const { token } = await t.account("owner@example.org", { name: "Owner", roles: ["owner"] });
    const item = await create(t, token, `mcp:https://mcp.test:${srv.port}/mcp`);
    assert.equal(item.state, "ok", item.status);
    assert.match(item.status, /^MCP stateful 2\.0\.0/);
    assert.equal(mcp.opened.length, 1);
    assert.deepEqual(mcp.ended, mcp.opened);
  } finally {
    await srv.close();
  }
});

Deno.test("checks: a long status from the target is cut at 120 characters, whole", async () => {
  const certs = await makeCerts(["mcp.test"], 90);
  const srv = localHttp(mcpHandler(true, "\u{1F600}".repeat(150)), certs);
  try {
    await using t = await mcpApp(certs);
    const { token } = await t.account("owner@example.org", { name: "Owner", roles: ["owner"] });
    const item = await create(t, token, `mcp:https://mcp.test:${srv.port}/mcp`);
    assert.equal(item.state, "ok", item.status);
    const status = item.status as string;
    assert.equal([...status].length, 120, "120 characters, not 60 emoji");
    assert.ok(status.isWellFormed(), "no emoji cut in two");
    assert.equal(status, "MCP " + "\u{1F600}".repeat(116));
  } finally {
    await srv.close();
  }
});

Deno.test("checks: without a TLS connector an https check is refused, no packet sent", async () => {
  let connects = 0;
  await using t = await testApp({
    resolver: fakeResolver({ "secure.test": ["93.184.216.34"] }),
    connector: () => {
      connects++;
      return Promise.reject(new Error("connection refused"));
    },
  });
  const { token } = await t.account("user@example.org", { name: "User" });
  const item = await create(t, token, "tls:secure.test");
  assert.equal(item.state, "off");
  assert.equal(connects, 0);
});

Deno.test("checks: a server that does not speak HTTP is off, with a short reason", async () => {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const replies = [
    "SSH-2.0-OpenSSH_9.6\r\n",
    "HTTP/1.1 200 OK\r\n" + "X-Fill: " + "a".repeat(40_000) + "\r\n\r\n",
    "",
  ];
  const loop = (async () => {
    for (const reply of replies) {
      const c = await l.accept();
      const buf = new Uint8Array(4096);
      await c.read(buf);
      if (reply) {
        try {
          await c.write(new TextEncoder().encode(reply));
        } catch { /* the client may have closed */ }
      }
      c.close();
    }
  })();
  try {
    await using t = await testApp({ connector: systemConnector });
    const { token } = await t.account("owner@example.org", { name: "Owner", roles: ["owner"] });
    const port = (l.addr as Deno.NetAddr).port;
    const statuses = [];
    for (let i = 0; i < replies.length; i++) {
      const item = await create(t, token, `url:http://127.0.0.1:${port}/`);
      assert.equal(item.state, "off", item.status);
      statuses.push(item.status);
    }
    assert.deepEqual(statuses, [
      "not an HTTP answer",
      "answer headers too large",
      "connection closed before an answer",
    ]);
    await loop;
  } finally {
    l.close();
  }
});
