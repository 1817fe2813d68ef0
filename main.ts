import { createApp } from "./app.ts";
import {
  DAILY,
  DAILY_CRON,
  dailyPassed,
  MINUTELY,
  RESUME,
  RESUME_AFTER_MS,
  runJobs,
} from "./jobs/mod.ts";
import { openKv } from "./kv/_atomic.ts";
import { countMigrations, runMigrations } from "./kv/store/migrations.ts";
import { chainTrail } from "./kv/store/trail.ts";
import { atTime, type Clock, fileClock, fileSteps, systemClock } from "./lib/clock.ts";
import {
  ConfigError,
  envRecord,
  kvFileRefusal,
  kvPathRefusal,
  loadConfig,
  productionRefusal,
} from "./lib/config.ts";
import type { Config } from "./lib/config.ts";
import type { Deps } from "./lib/deps.ts";
import { configureLog, errorKind, flushLog, log } from "./lib/log.ts";
import { createMailer } from "./lib/mail.ts";
import { after, every } from "./lib/timers.ts";
import { systemConnector, systemResolver, systemTls } from "./lib/net.ts";

/** How long a stop waits for requests in flight before it gives up on them. */
const STOP_WAIT_MS = 8_000;
const t0 = performance.now();

/** A start that cannot go on: one line a person can act on, on standard error, and exit 1. */
function refuse(reason: string): never {
  flushLog();
  console.error(`cannot start: ${reason}`);
  Deno.exit(1);
}

/** Whether this start created the KV (or found it empty): a new install. */
let newInstall = false;

/** The configuration, or a refusal: checked before anything is opened, listened on or created. */
async function configure(): Promise<Config> {
  let config;
  try {
    config = loadConfig(envRecord());
  } catch (err) {
    refuse(err instanceof ConfigError ? err.message : String(err));
  }
  const unsafe = productionRefusal(config, envRecord());
  if (unsafe) refuse(unsafe);
  configureLog(config.logLevel);
  const badPath = await kvPathRefusal(envRecord()) ?? await kvFileRefusal(config.kvPath, null);
  if (badPath) refuse(badPath);
  return config;
}

/** The KV opened (created when new), migrated, and the rest of what the app depends on. */
async function start(config: Config): Promise<Deps> {
  // Said once the port is taken: a start that cannot listen prints its refusal alone.
  if (!config.secretsKey) {
    log("warn", "SECRETS_KEY is not set: alert channels with tokens cannot be added or sent to");
  }
  // A test's clock (TEST_CLOCK_FILE, never in production: productionRefusal) or the system's.
  const clock: Clock = config.testClockFile ? fileClock(config.testClockFile) : systemClock;
  const where = config.kvPath ?? "the platform KV";
  let kv: Deno.Kv;
  try {
    const existed = await fileExists(config.kvPath);
    kv = await openKv(config.kvPath);
    // The first line says which data this process serves: a new, empty KV is worth noticing.
    const level = await countMigrations(kv);
    const fresh = existed === false || level === 0;
    newInstall = fresh;
    log(
      "info",
      fresh
        ? `created a new KV at ${where}`
        : `opened the existing KV at ${where} (schema level ${level})`,
      { kv: fresh ? "new" : "existing", schema: level },
    );
    await runMigrations(kv, clock.now(), { secretsKey: config.secretsKey ?? null });
  } catch (err) {
    refuse(`cannot open the KV at ${where}: ${err instanceof Error ? err.message : err}`);
  }
  return {
    kv,
    clock,
    mailer: createMailer(config),
    resolver: systemResolver,
    connector: systemConnector,
    tls: systemTls(),
    config,
    print: (text) => console.log(text),
  };
}

/** Whether the KV file is there before it is opened; undefined for the platform KV. */
async function fileExists(path: string | undefined): Promise<boolean | undefined> {
  if (path === undefined || /^https?:/.test(path)) return undefined;
  if (path === ":memory:") return false;
  try {
    await Deno.stat(path);
    return true;
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return false;
    throw err;
  }
}

const config = await configure();

/**
 * Requests go to the app once the KV is open; until then they wait for it. The port is taken
 * before the KV is opened, so a start that cannot listen refuses before it creates anything.
 */
type Answer = (req: Request, info: Deno.ServeHandlerInfo) => Response | Promise<Response>;
let answer = null as Answer | null;
const answering = Promise.withResolvers<Answer>();
let server: Deno.HttpServer;
try {
  server = Deno.serve(
    { port: config.port, hostname: config.hostname, onListen: () => {} },
    (req, info) => answer ? answer(req, info) : answering.promise.then((a) => a(req, info)),
  );
} catch (err) {
  const { hostname, port } = config;
  refuse(
    err instanceof Deno.errors.AddrInUse
      ? `port ${port} on ${hostname} is already in use (another server running?)`
      : `cannot listen on ${hostname}:${port}: ${err instanceof Error ? err.message : err}`,
  );
}

const ready = start(config);

/** The server's time at the last minutely run (for the daily jobs under a test clock). */
let lastMinutely = Infinity;

/** The minutely jobs; under a test clock also the daily ones once its clock passed their time. */
function minutely(deps: Deps) {
  const now = deps.clock.now();
  const daily = deps.config.testClockFile !== undefined && dailyPassed(lastMinutely, now);
  lastMinutely = now;
  return daily ? [...MINUTELY, ...DAILY] : MINUTELY;
}

/** The minutely run in progress or last finished: a cron's run and a test's step never overlap. */
let minutelyRun: Promise<void> = Promise.resolve();
function runMinutely(deps: Deps): Promise<void> {
  // Watched (jobs/watchdog.ts): the run's pulse (this monitor's own downtime) and WATCHDOG_URL.
  // The jobs start at once, as ever: the watch goes beside them, never before them.
  minutelyRun = minutelyRun.then(async () => {
    const jobs = runJobs(deps, minutely(deps));
    const { watchedRun } = await import("./jobs/watchdog.ts");
    await watchedRun(deps, jobs);
  });
  return minutelyRun;
}

// Deno Deploy wants cron jobs registered at the top level of the main module.
Deno.cron("minutely jobs", "* * * * *", async () => runMinutely(await ready));
Deno.cron("daily jobs", DAILY_CRON, async () => void await runJobs(await ready, DAILY));

const deps = await ready;
// The requests waiting for the KV are answered first: the background work below (modules to load,
// the queue listener, timers) starts once they are on their way, not before the first answer.
const app = createApp(deps);
answer = app.fetch;
answering.resolve(app.fetch);
// Trail lines a crash left queued are chained now, not at the next minute.
chainTrail(deps.kv).catch((err) => log("error", "trail chain failed", { error: errorKind(err) }));
lastMinutely = deps.clock.now();
// A start ends the stretch no process ran (kv/service/monitor.ts): its gap ends now, not at the
// first minutely run, which may come a minute later.
import("./jobs/pulse.ts").then((m) => m.pulse(deps));
// The KV queue: looks pings asked for and wakes at due times, within seconds (jobs/queue.ts).
deps.kv.listenQueue(async (msg) => {
  const { handleQueued } = await import("./jobs/queue.ts");
  await handleQueued(deps, msg);
}).catch((err) => log("error", "queue listener stopped", { error: errorKind(err) }));
// The due indexes between the minutely runs, every 2 s (jobs/poll.ts; jobs/checks.ts POLL_MS).
const polling = every(2_000, async () => {
  const { pollWhenDue } = await import("./jobs/poll.ts");
  await pollWhenDue(deps).catch((err) =>
    log("error", "due poll failed", { error: errorKind(err) })
  );
});
// What a previous process cut by dying (a look, a mail, a post) once its claims have ended,
// by the server's clock (the claims' own).
atTime(deps.clock, deps.clock.now() + RESUME_AFTER_MS, () => void runJobs(deps, RESUME));
// Under a test clock a test also runs the minutely jobs at once (tests/_real_server.ts
// `testClock().runJobs`) instead of waiting for the next wall-clock minute.
if (deps.config.testClockFile) {
  fileSteps(deps.config.testClockFile, async () => {
    await runMinutely(deps);
    flushLog();
  });
}
{
  const { hostname, port } = server.addr as Deno.NetAddr;
  log("info", `listening on http://${hostname}:${port} (mail: ${deps.mailer.kind})`, {
    mail: deps.mailer.kind,
    kv: deps.config.kvPath === undefined ? "platform" : "file",
    start_ms: Math.round(performance.now() - t0),
    pid: Deno.pid,
  });
}

/**
 * A self-hosted server without an owner prints, at each start, a link that makes the signed-in
 * person who opens it the owner (kv/accounts/owner_claim.ts): on a new KV, and again while no printed
 * link was used. It goes to standard output as a block, for the person at the console; on
 * Deno Deploy, whose logs are the platform's, the owner uses `deno task roles` instead.
 */
if (deps.config.kvPath !== undefined) {
  const { renewOwnerClaim } = await import("./kv/accounts/owner_claim.ts");
  const token = await renewOwnerClaim(deps.kv, newInstall, deps.clock.now()).catch(() => null);
  if (token !== null) {
    // A block like a printed mail's: a message to the person at the console, not a log line.
    // The log lines buffered so far go first, so the output's first line stays the KV's.
    flushLog();
    console.log(
      `--- owner link\nNo owner yet. To become this server's owner, sign in and open ` +
        `${deps.config.baseUrl}/me/standing/owner?claim=${token} ` +
        `(valid for 24 hours, once; or: deno task roles grant <address> owner)\n--- end`,
    );
  }
}

let stopping = false;
/**
 * SIGTERM/SIGINT: stop taking connections, let requests in flight finish (a heartbeat is
 * answered only once stored, so none that was acknowledged is lost), commit what the
 * heartbeat batch still holds, close KV and exit.
 */
async function stop(signal: string) {
  if (stopping) return;
  stopping = true;
  const began = performance.now();
  log("info", "stopping", { signal });
  flushLog();
  const late = after(STOP_WAIT_MS, () => {
    log("warn", "stopped before requests in flight finished", { waited_ms: STOP_WAIT_MS });
    flushLog();
    Deno.exit(1);
  });
  polling.cancel();
  try {
    await server.shutdown();
    // kv/service/heartbeats.ts is loaded by the first heartbeat; without one there is nothing to commit.
    const { flushBeats } = await import("./kv/service/heartbeats.ts");
    await flushBeats(deps.kv);
    deps.kv.close();
  } catch (err) {
    log("error", "stop", { error: errorKind(err) });
  }
  late.cancel();
  log("info", "stopped", { signal, ms: Math.round(performance.now() - began) });
  flushLog();
  Deno.exit(0);
}

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  try {
    Deno.addSignalListener(signal, () => void stop(signal));
  } catch { /* a platform without signals (Deno Deploy, Windows' SIGTERM) */ }
}
