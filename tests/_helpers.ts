import { createApp } from "../app.ts";
import { atomic, openKv, transact } from "../kv/_atomic.ts";
import { type Account, prepareAccount, type Role } from "../kv/accounts/accounts.ts";
import { runMigrations } from "../kv/store/migrations.ts";
import { prepareSession } from "../kv/accounts/sessions.ts";
import type { Clock } from "../lib/clock.ts";
import { type Config, loadConfig } from "../lib/config.ts";
import type { Deps } from "../lib/deps.ts";
import { captureLog } from "../lib/log.ts";
import type { Mail, Mailer } from "../lib/mail.ts";
import type { Connector, Resolver, TlsConnector } from "../lib/net.ts";

export const T0 = Date.parse("2026-03-02T09:00:00.000Z");

export interface FakeClock extends Clock {
  advance(ms: number): void;
  set(ms: number): void;
}

export function fakeClock(start = T0): FakeClock {
  let t = start;
  return { now: () => t, advance: (ms) => void (t += ms), set: (ms) => void (t = ms) };
}

export interface CaptureMailer extends Mailer {
  sent: Mail[];
  /** When set, send() throws this, as a relay that is down would. */
  failWith: Error | null;
  /** The last mail to an address. */
  last(to: string): Mail | undefined;
  /** The token of the last link mailed to an address. */
  linkToken(to: string): string;
}

export function captureMailer(): CaptureMailer {
  const m: CaptureMailer = {
    kind: "capture",
    sent: [],
    failWith: null,
    send(mail) {
      if (m.failWith) return Promise.reject(m.failWith);
      m.sent.push(mail);
      return Promise.resolve();
    },
    last: (to) => m.sent.findLast((x) => x.to === to),
    linkToken(to) {
      const mail = m.last(to);
      const found = mail?.text.match(/\/me\?verify=([A-Za-z0-9_-]+)/);
      if (!found) throw new Error(`no link mailed to ${to}`);
      return found[1];
    },
  };
  return m;
}

/** Tests never touch the network: names resolve only to what a test says. */
export function fakeResolver(table: Record<string, string[]> = {}): Resolver {
  return (host) => {
    const found = table[host];
    return found ? Promise.resolve(found) : Promise.reject(new Error(`ENOTFOUND ${host}`));
  };
}

/** Refuses every connection; tests that need one pass their own. */
export const refusingConnector: Connector = () =>
  Promise.reject(new Error("connection refused by the test connector"));

export interface Res {
  status: number;
  headers: Headers;
  // deno-lint-ignore no-explicit-any
  body: any;
  text: string;
}

export interface ReqOptions {
  token?: string;
  body?: unknown;
  /** A raw body, sent as is. */
  raw?: BodyInit;
  headers?: Record<string, string>;
  /** The client's address (the "origin" of rate limits). */
  from?: string;
}

export interface TestApp extends AsyncDisposable {
  app: ReturnType<typeof createApp>;
  deps: Deps;
  kv: Deno.Kv;
  clock: FakeClock;
  mail: CaptureMailer;
  /** What the app printed to standard output (`deps.print`), kept instead of printed. */
  printed: string[];
  req(method: string, path: string, opts?: ReqOptions): Promise<Res>;
  /** Signs in through the mailed link, as a client would; answers the verify body. */
  signIn(email: string, opts?: { name?: string; from?: string }): Promise<Res["body"]>;
  /** An account and a session written straight to KV (fast, for tests about other things). */
  account(
    email: string,
    opts?: { name?: string; roles?: Role[] },
  ): Promise<{ account: Account; token: string }>;
}

let origins = 0;

export async function testApp(
  opts: {
    config?: Partial<Config>;
    resolver?: Resolver;
    connector?: Connector;
    tls?: TlsConnector;
    /** A KV file instead of the in-memory KV (tests of the file itself). */
    kvPath?: string;
  } = {},
): Promise<TestApp> {
  // Opened as main.ts opens the real KV (lock retries), so tests run the same
  // code paths.
  const kvPath = opts.kvPath ?? ":memory:";
  const kv = await openKv(kvPath);
  const clock = fakeClock();
  const mail = captureMailer();
  const printed: string[] = [];
  await runMigrations(kv, clock.now());
  const config: Config = {
    ...loadConfig({ BASE_URL: "http://test.local" }),
    kvPath,
    serviceToken: "service-token-for-tests-0123456789",
    secretsKey: "secrets-key-for-tests-0123456789abcdef",
    ...opts.config,
  };
  const deps: Deps = {
    kv,
    clock,
    mailer: mail,
    resolver: opts.resolver ?? fakeResolver(),
    connector: opts.connector ?? refusingConnector,
    tls: opts.tls,
    config,
    print: (text) => void printed.push(text),
  };
  const app = createApp(deps);

  const req: TestApp["req"] = async (method, path, o = {}) => {
    const headers: Record<string, string> = { ...o.headers };
    if (o.token) headers["authorization"] = `Bearer ${o.token}`;
    let body: BodyInit | undefined = o.raw;
    if (o.body !== undefined) {
      body = JSON.stringify(o.body);
      headers["content-type"] ??= "application/json";
    }
    const env = { remoteAddr: { hostname: o.from ?? "192.0.2.1" } };
    const res = await app.request(path, { method, headers, body }, env);
    const text = await res.text();
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch { /* not JSON */ }
    return { status: res.status, headers: res.headers, body: parsed, text };
  };

  return {
    app,
    deps,
    kv,
    clock,
    mail,
    printed,
    req,
    async signIn(email, o = {}) {
      const from = o.from ?? `198.51.100.${++origins % 250}`;
      const asked = await req("POST", "/api/verify/request", {
        body: { email, purpose: "login", age_ok: true, name: o.name },
        from,
      });
      if (asked.status !== 202) throw new Error(`link request answered ${asked.status}`);
      const res = await req("GET", `/api/verify?token=${mail.linkToken(email)}`, { from });
      if (res.status !== 200) throw new Error(`verify answered ${res.status}: ${res.text}`);
      return res.body;
    },
    async account(email, o = {}) {
      const now = clock.now();
      return await transact(async () => {
        const acc = await prepareAccount(kv, email, o.name ?? "", now, o.roles ?? []);
        const s = await prepareSession(kv, acc.account.id, now);
        const op = s.apply(acc.apply(atomic(kv)));
        return { op, result: { account: acc.account, token: s.token } };
      });
    },
    [Symbol.asyncDispose]() {
      try {
        kv.close();
      } catch { /* a test closed it already (database-down tests) */ }
      return Promise.resolve();
    },
  };
}

/** Every key and value in the KV, as text, for tests that prove something is gone. */
export async function dumpKv(kv: Deno.Kv): Promise<string> {
  const lines: string[] = [];
  for await (const e of kv.list({ prefix: [] })) {
    lines.push(`${JSON.stringify(e.key)} ${
      JSON.stringify(
        e.value,
        (_k, v) =>
          typeof v === "bigint"
            ? String(v)
            : v instanceof Uint8Array
            ? new TextDecoder().decode(v)
            : v,
      )
    }`);
  }
  return lines.join("\n");
}

type Commit = () => Promise<Deno.KvCommitResult | Deno.KvCommitError>;

/**
 * The KV with every atomic's commit handed to `around`, with the keys that atomic sets: a test
 * injects a race right before a commit, or holds one back after it landed.
 */
export function aroundCommits(
  kv: Deno.Kv,
  around: (commit: Commit, sets: Deno.KvKey[]) => ReturnType<Commit>,
): Deno.Kv {
  return new Proxy(kv, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (prop !== "atomic") return typeof value === "function" ? value.bind(target) : value;
      return () => {
        const op = target.atomic();
        const sets: Deno.KvKey[] = [];
        const proxy: Deno.AtomicOperation = new Proxy(op, {
          get(o, p) {
            const v = Reflect.get(o, p, o);
            if (typeof v !== "function") return v;
            if (p === "commit") return () => around(() => o.commit(), sets);
            return (...args: unknown[]) => {
              if (p === "set") sets.push(args[0] as Deno.KvKey);
              const r = v.apply(o, args);
              return r === o ? proxy : r;
            };
          },
        });
        return proxy;
      };
    },
  });
}

/**
 * Whether an operation answers in another product's own form (Healthchecks' plain-text ping
 * answers, Uptime Kuma's `{ok, msg}`), not `{error}`: api/compat_docs.ts tags them so.
 */
export const foreignAnswers = (op: { tags?: string[] }) =>
  (op.tags ?? []).some((t) => t === "healthchecks-pings" || t === "uptime-kuma");

/** A service of the account as GET /api/me/services lists it. */
export const serviceItem = async (t: TestApp, token: string, id: number) =>
  (await t.req("GET", "/api/me/services", { token })).body.items.find((x: { id: number }) =>
    x.id === id
  );

/** A service's kept events, newest first (GET /api/me/services/<id>/events). */
export async function serviceEvents(t: TestApp, token: string, id: number) {
  const r = await t.req("GET", `/api/me/services/${id}/events`, { token });
  if (r.status !== 200) throw new Error(`events of service ${id}: ${r.status} ${r.text}`);
  return r.body.items;
}

/**
 * Runs `fn`, which breaks something on purpose, with the operator log captured instead of
 * printed: every warning or error line it writes must match one of `expected`, and each of
 * `expected` must be met, so a green run prints no alarming line and an unexpected one fails.
 */
export async function expectLog<T>(expected: RegExp[], fn: () => Promise<T>): Promise<T> {
  const lines: string[] = [];
  const restore = captureLog((line) => {
    if (/"level":"(warn|error)"/.test(line)) lines.push(line);
  });
  let result: T;
  try {
    result = await fn();
  } finally {
    restore(); // writes what is buffered into `lines`
  }
  const unexpected = lines.filter((l) => !expected.some((re) => re.test(l)));
  if (unexpected.length) throw new Error(`unexpected log lines:\n${unexpected.join("\n")}`);
  const missing = expected.filter((re) => !lines.some((l) => re.test(l)));
  if (missing.length) throw new Error(`expected log lines not written: ${missing.join(", ")}`);
  return result;
}
