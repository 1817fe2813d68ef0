/**
 * The real server for end-to-end tests and benchmarks: `main.ts` in a child process on
 * 127.0.0.1 with an ephemeral port and a KV file in a temporary directory. Mail is printed
 * to its standard output (no SMTP_URL), which is how `signIn` finds the link.
 */

import { atomic, openKv, transact } from "../kv/_atomic.ts";
import { MINUTE } from "../lib/clock.ts";
import { prepareAccount } from "../kv/accounts/accounts.ts";
import { runMigrations } from "../kv/store/migrations.ts";
import { prepareSession } from "../kv/accounts/sessions.ts";
import { runTask, spawnService } from "./_server.ts";
import { type Certs, makeCerts } from "./_servers.ts";
import { type Sink, smtpSink } from "./_smtp.ts";

export interface RealServer extends AsyncDisposable {
  port: number;
  pid: number;
  base: string;
  kvPath: string;
  /** A new account through the mailed link; answers its bearer token. */
  signIn(email: string): Promise<string>;
  /** Everything the server printed so far. */
  output(): string;
  /** Resolves when the server process has exited. */
  exited: Promise<Deno.CommandStatus>;
}

/** The service (tests/_server.ts) on a KV file of its own, removed when the server stops. */
export async function startFreshServer(env: Record<string, string> = {}): Promise<RealServer> {
  const dir = await Deno.makeTempDir({ prefix: "files_e2e_" });
  const kvPath = `${dir}/kv.sqlite3`;
  const removeDir = () => Deno.remove(dir, { recursive: true }).catch(() => {});
  const server = await spawnService(kvPath, { BASE_URL: "http://127.0.0.1", ...env })
    .catch(async (err) => {
      await removeDir();
      throw err;
    });
  const base = server.url;
  return {
    port: Number(new URL(base).port),
    pid: server.pid,
    base,
    kvPath,
    output: () => server.stdout.text,
    exited: server.status,
    signIn: (email) =>
      signInWith(base, email, async () =>
        (await server.stdout.waitFor(
          new RegExp(`To: ${email.replace(/[.]/g, "\\.")}[^]*?verify=([A-Za-z0-9_-]+)`),
          30_000,
        ))[1]),
    async [Symbol.asyncDispose]() {
      await server.stop();
      await removeDir();
    },
  };
}

export interface RawAnswer {
  status: number;
  headers: Headers;
  text: string;
}

/**
 * One HTTP/1.1 request over a plain TCP connection, so that a body can be streamed with a
 * Content-Length (fetch sends streams chunked), cut short, or dropped. `body` writes the
 * bytes; it may throw to drop the connection.
 */
export async function rawRequest(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body: (write: (b: Uint8Array) => Promise<void>, conn: Deno.TcpConn) => Promise<void>,
): Promise<RawAnswer> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    const head = [`${method} ${path} HTTP/1.1`, `Host: 127.0.0.1:${port}`, "Connection: close"];
    for (const [k, v] of Object.entries(headers)) head.push(`${k}: ${v}`);
    const enc = new TextEncoder();
    const writeAll = async (b: Uint8Array) => {
      let off = 0;
      while (off < b.length) off += await conn.write(b.subarray(off));
    };
    await writeAll(enc.encode(head.join("\r\n") + "\r\n\r\n"));
    // The server may answer (and close) before the body is all sent: stop writing then.
    await body(writeAll, conn).catch((err) => {
      if (!(err instanceof Deno.errors.BrokenPipe || err instanceof Deno.errors.ConnectionReset)) {
        throw err;
      }
    });
    // Read to the end of the answer: EOF, or Content-Length bytes after the head (a server
    // that answered early may keep the connection open, waiting for the announced body).
    let all = new Uint8Array(0);
    const buf = new Uint8Array(64 * 1024);
    for (;;) {
      const n = await conn.read(buf).catch(() => null);
      if (n === null) break;
      const next = new Uint8Array(all.length + n);
      next.set(all);
      next.set(buf.subarray(0, n), all.length);
      all = next;
      const text = new TextDecoder().decode(all);
      const end = text.indexOf("\r\n\r\n");
      const length = text.slice(0, end).match(/\r\ncontent-length:\s*(\d+)/i);
      if (end >= 0 && length && all.length >= end + 4 + Number(length[1])) break;
    }
    const raw = new TextDecoder().decode(all);
    const split = raw.indexOf("\r\n\r\n");
    const lines = raw.slice(0, split).split("\r\n");
    const status = Number(lines[0].split(" ")[1]);
    const h = new Headers();
    for (const l of lines.slice(1)) {
      const i = l.indexOf(":");
      h.append(l.slice(0, i).trim(), l.slice(i + 1).trim());
    }
    let text = raw.slice(split + 4);
    if (h.get("transfer-encoding")?.includes("chunked")) {
      let decoded = "";
      let rest = text;
      for (;;) {
        const eol = rest.indexOf("\r\n");
        const size = parseInt(rest.slice(0, eol), 16);
        if (!size) break;
        decoded += rest.slice(eol + 2, eol + 2 + size);
        rest = rest.slice(eol + 2 + size + 2);
      }
      text = decoded;
    }
    return { status, headers: h, text };
  } finally {
    try {
      conn.close();
    } catch { /* closed by the body writer */ }
  }
}

/** What `testClock` answers: the switch for the server and what moves its time and jobs. */
export interface TestClock extends AsyncDisposable {
  env: Record<string, string>;
  offset(): number;
  advance(ms: number): Promise<void>;
  /** The server's time now. */
  now(): number;
  /** Runs the server's minutely jobs now (as its cron would) and resolves when they are done. */
  runJobs(): Promise<void>;
  /**
   * Runs the minutely jobs until `done()` holds (checked for a moment after each run, for
   * what the run sent to arrive), at most `runs` times; throws naming `what` otherwise.
   */
  runJobsUntil(what: string, done: () => boolean | Promise<boolean>, runs?: number): Promise<void>;
  /**
   * Lets minutes pass as the cron sees them, one at a time (the clock a minute on, then the
   * minutely run), until `done()` holds, at most `minutes` of them.
   */
  passMinutes(what: string, done: () => boolean | Promise<boolean>, minutes: number): Promise<void>;
}

/**
 * A test clock for a server process (TEST_CLOCK_FILE, lib/clock.ts `fileClock` and
 * `fileSteps`): `env` starts the server with it; `advance` moves the server's clock on (never
 * back) by writing the new offset whole, so the server never reads half a number; `runJobs`
 * asks the server for its minutely run at once instead of waiting for the wall clock's minute,
 * `passMinutes` lets minutes pass as the cron would see them.
 */
export async function testClock(): Promise<TestClock> {
  const dir = await Deno.makeTempDir({ prefix: "clock_" });
  const file = `${dir}/offset`;
  let offset = 0;
  let steps = 0;
  await Deno.writeTextFile(file, "0");
  const writeWhole = async (path: string, text: string) => {
    await Deno.writeTextFile(`${path}.new`, text);
    await Deno.rename(`${path}.new`, path);
  };
  const stepsDone = () => Deno.readTextFile(`${file}.done`).then(Number, () => 0);
  const runJobs = async () => {
    const step = ++steps;
    await writeWhole(`${file}.step`, String(step));
    const until = Date.now() + 60_000;
    while (await stepsDone() < step) {
      if (Date.now() > until) throw new Error("the server did not run its jobs within 60 s");
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  /** Runs the jobs (each turn after `before`) until `done()` holds, at most `runs` times. */
  const until = async (
    what: string,
    done: () => boolean | Promise<boolean>,
    runs: number,
    before: () => Promise<void>,
  ) => {
    for (let i = 0; i < runs; i++) {
      await before();
      await runJobs();
      // What the last run sent may pass the KV queue and a relay on a loaded machine.
      const settled = Date.now() + (i === runs - 1 ? 15_000 : 2_000);
      do {
        if (await done()) return;
        await new Promise((r) => setTimeout(r, 50));
      } while (Date.now() < settled);
    }
    throw new Error(`${what}: not after ${runs} runs of the minutely jobs`);
  };
  const clock: TestClock = {
    env: { TEST_CLOCK_FILE: file },
    offset: () => offset,
    now: () => Date.now() + offset,
    async advance(ms) {
      offset += Math.max(0, Math.round(ms));
      await writeWhole(file, String(offset));
    },
    runJobs,
    runJobsUntil: (what, done, runs = 1) => until(what, done, runs, async () => {}),
    passMinutes: (what, done, minutes) => until(what, done, minutes, () => clock.advance(MINUTE)),
    [Symbol.asyncDispose]: () => Deno.remove(dir, { recursive: true }),
  };
  return clock;
}

/** Waits for the first item of `list()` that `pick` accepts (polling), up to `ms`. */
export async function arrival<T>(
  what: string,
  list: () => T[],
  pick: (x: T) => boolean,
  ms: number,
): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const found = list().find(pick);
    if (found) return found;
    if (Date.now() > until) throw new Error(`no ${what} within ${ms} ms`);
    // The list is in memory (a sink's mails, a receiver's posts): looking is cheap, waiting not.
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * A sign-in as a client makes it: asks for a link, reads its token with `linkToken` (from the
 * printed mail or a relay), completes it; answers the bearer token.
 */
async function signInWith(
  base: string,
  email: string,
  linkToken: () => Promise<string>,
): Promise<string> {
  const asked = await fetch(`${base}/api/verify/request`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, purpose: "login", age_ok: true }),
  });
  await asked.body?.cancel();
  if (asked.status !== 202) throw new Error(`link request answered ${asked.status}`);
  const verified = await fetch(`${base}/api/verify?token=${await linkToken()}`);
  const body = await verified.json();
  if (verified.status !== 200) throw new Error(`verify answered ${verified.status}`);
  return body.token as string;
}

/**
 * A client of the server's JSON API with a bearer token: `api(method, path, body?)` answers
 * the parsed body, and throws unless the answer is 200 (or 201, a creation).
 */
export function bearerApi(base: string, token: string) {
  return async (method: string, path: string, body?: unknown) => {
    const r = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await r.json();
    if (r.status !== 200 && r.status !== 201) {
      throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(json)}`);
    }
    return json;
  };
}

/** Signs in at a server that mails through `sink` (tests/_smtp.ts); answers the bearer token. */
export function signInByMail(
  base: string,
  sink: { mails: { to: string; subject: string; text: string }[] },
  email: string,
): Promise<string> {
  const before = sink.mails.length;
  return signInWith(base, email, async () => {
    const mail = await arrival(
      `sign-in mail to ${email}`,
      () => sink.mails.slice(before),
      (m) => m.to === email && m.subject === "Your sign-in link",
      20_000,
    );
    const link = mail.text.match(/verify=([\w-]+)/);
    if (!link) throw new Error("no link in the sign-in mail");
    return link[1];
  });
}

/**
 * A KV file with one account and a session, made before the server opens it (as an owner
 * would with the roles command); answers the session's bearer token.
 */
export async function seedAccount(kvPath: string, email: string, name: string): Promise<string> {
  const seed = await openKv(kvPath);
  try {
    await runMigrations(seed, Date.now());
    return await transact(async () => {
      const acc = await prepareAccount(seed, email, name, Date.now());
      const s = await prepareSession(seed, acc.account.id, Date.now());
      return { op: s.apply(acc.apply(atomic(seed))), result: s.token };
    });
  } finally {
    seed.close();
  }
}

/** A minutely checks run's log line, or a start's resuming one (`checks-resume`, main.ts). */
const CHECKS_RUN = /"job":"checks(?:-resume)?"/;
const LOOKED = new RegExp(
  `${CHECKS_RUN.source}[^\\n]*"heartbeats_reviewed":[1-9]|"queued look"[^\\n]*"looked":1`,
);

/**
 * Whether a look at a heartbeat was logged after `from` (an offset in the server's log): a
 * minutely run that reviewed one, the run a start makes once its claims have ended
 * (`checks-resume`, main.ts: it fires within a second of real time after the test clock passes
 * it, so it may take a review in the middle of a test), or the look a failure asked for through
 * the KV queue.
 */
export function lookedSince(log: { text: string }, from: number): boolean {
  return LOOKED.test(log.text.slice(from));
}

/** What `withClockedServer` hands its test: the server and what drives and watches it. */
export interface ClockedServer {
  token: string;
  clock: TestClock;
  sink: Sink;
  server: Awaited<ReturnType<typeof spawnService>>;
}

/**
 * Runs `fn` with the real server on a KV file of its own (`seedAccount` gave it `email`'s
 * account and session), mailing to a local SMTP relay, its clock the test clock; everything
 * is stopped and removed afterwards.
 */
export async function withClockedServer(
  prefix: string,
  who: { email: string; name: string },
  fn: (s: ClockedServer) => Promise<void>,
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix });
  const kvPath = `${dir}/kv.sqlite3`;
  try {
    const token = await seedAccount(kvPath, who.email, who.name);
    await using clock = await testClock();
    await using sink = await smtpSink();
    await using server = await spawnService(kvPath, {
      SMTP_URL: sink.url,
      BASE_URL: "http://127.0.0.1",
      ...clock.env,
    });
    try {
      await fn({ token, clock, sink, server });
    } catch (err) {
      // What the server said last (its lines hold no address, key or text, lib/log.ts): the
      // why of a failure that only a loaded machine shows, named in the failure itself.
      const said = `${server.stdout.text}${server.stderr.text}`.split("\n")
        .filter((l) => l !== "" && !l.includes('"msg":"request"')).slice(-30).join("\n");
      throw new Error(
        `${err instanceof Error ? err.message : err}\nthe server's last lines:\n${said}`,
        {
          cause: err,
        },
      );
    }
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

const hasCurl = await new Deno.Command("curl", { args: ["--version"], stdout: "null" }).output()
  .then((o) => o.success, () => false);

/**
 * A cron line's ping after its job, through a real shell and curl when the machine has them
 * (else the same request with fetch): `job; curl -fsS -m 10 --retry 5 URL/$?` for an exit code
 * (0 or 1), `curl -fsS -m 10 --retry 5 URL/fail` for "fail".
 */
export async function cronPing(hook: string, exit: 0 | 1 | "fail"): Promise<void> {
  const line = exit === "fail"
    ? `curl -fsS -m 10 --retry 5 "$HOOK/fail"`
    : `${exit === 0 ? "true" : "false"}; curl -fsS -m 10 --retry 5 "$HOOK/$?"`;
  if (hasCurl) {
    const out = await new Deno.Command("sh", {
      args: ["-c", line],
      env: { HOOK: hook },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const said = new TextDecoder().decode(out.stdout);
    if (out.code !== 0 || !said.includes('"ok":true')) {
      throw new Error(`${line}: ${out.code} ${said} ${new TextDecoder().decode(out.stderr)}`);
    }
  } else {
    const r = await fetch(`${hook}/${exit}`);
    if (r.status !== 200) throw new Error(`${hook}/${exit}: ${r.status} ${await r.text()}`);
    await r.body?.cancel();
  }
}

/** What alert tests share: a KV file whose `owner` may alert to 127.0.0.1, and a relay. */
export interface AlertBench extends AsyncDisposable {
  kvPath: string;
  /** For the receivers (tests/_servers.ts `webhookReceiver`): the server trusts their CA. */
  certs: Certs;
  sink: Sink;
  /** The server's environment: the relay, BASE_URL, the receivers' CA. */
  env: Record<string, string>;
}

/**
 * A KV file in a temporary folder whose `owner` address holds the owner role (so its channels
 * and targets may be on 127.0.0.1), a local SMTP relay and certificates for HTTPS receivers;
 * everything is removed when disposed.
 */
export async function alertBench(prefix: string, owner: string): Promise<AlertBench> {
  const dir = await Deno.makeTempDir({ prefix });
  const removeDir = () => Deno.remove(dir, { recursive: true }).catch(() => {});
  try {
    const kvPath = `${dir}/kv.sqlite3`;
    const certs = await makeCerts(["127.0.0.1"], 30);
    await Deno.writeTextFile(`${dir}/ca.pem`, certs.ca);
    const granted = await runTask("roles", ["grant", "--create", owner, "owner"], {
      KV_PATH: kvPath,
    });
    if (granted.code !== 0) throw new Error(`roles grant: ${granted.stderr}`);
    const sink = await smtpSink();
    return {
      kvPath,
      certs,
      sink,
      env: { SMTP_URL: sink.url, BASE_URL: "http://127.0.0.1", DENO_CERT: `${dir}/ca.pem` },
      async [Symbol.asyncDispose]() {
        await sink[Symbol.asyncDispose]();
        await removeDir();
      },
    };
  } catch (err) {
    await removeDir();
    throw err;
  }
}

/**
 * How many heartbeats the minutely runs (and a start's resuming run) logged after `from` (an
 * offset in the server's log) looked at in all (each run's line counts its looks).
 */
export function heartbeatsReviewed(log: { text: string }, from: number): number {
  let seen = 0;
  // Whole lines only: the last may still be being written.
  for (const line of log.text.slice(from).split("\n").slice(0, -1)) {
    if (CHECKS_RUN.test(line)) seen += JSON.parse(line).heartbeats_reviewed ?? 0;
  }
  return seen;
}

/**
 * How many looks at heartbeats were logged after `from` (an offset in the server's log): the
 * runs' reviews (`heartbeatsReviewed`) and the looks the KV queue asked for (jobs/queue.ts).
 * Each is logged once the alerts it sent are delivered (kv/service/looks.ts `reviewHeartbeat`
 * sends before it returns), so a mail a look sent is at the relay by the time its line is.
 */
export function looksLogged(log: { text: string }, from: number): number {
  let seen = heartbeatsReviewed(log, from);
  for (const line of log.text.slice(from).split("\n").slice(0, -1)) {
    if (line.includes('"msg":"queued look"')) seen += JSON.parse(line).looked ?? 0;
  }
  return seen;
}

/**
 * Waits until the server's outbox is empty (GET /metrics from loopback,
 * `catalogue_mail_queue_depth`), up to `ms`: every delivery queued so far is sent and deleted,
 * a followers' record only once its mails are queued (kv/alerts/outbox.ts `writeFollowers`), so
 * whatever was queued before the call has reached the relay or a receiver by then.
 */
export async function outboxDrained(base: string, ms = 20_000): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    const text = await (await fetch(`${base}/metrics`)).text();
    const depth = text.match(/^catalogue_mail_queue_depth (\d+)$/m);
    if (!depth) throw new Error(`no outbox depth in /metrics: ${text.slice(0, 200)}`);
    if (depth[1] === "0") return;
    if (Date.now() > until) throw new Error(`the outbox held ${depth[1]} after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
