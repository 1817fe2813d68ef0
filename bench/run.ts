/**
 * `deno task bench`: the service (main.ts, a KV file in a temp dir) next to a bare Deno.serve
 * answering the same JSON (bench/_bare.ts), both as processes on 127.0.0.1, loaded in turn
 * by autocannon from this process. Per endpoint: req/s, p99 latency, and the server's own CPU
 * time per request (utime + stime from /proc/<pid>/stat, so the load generator's CPU is not
 * counted). Also cold start (spawn to the first healthz answer) and idle RSS of both.
 * Then runs the other areas' bench scripts that exist; each prints its own table.
 *
 * Options (environment): BENCH_SECONDS (per run, default 5), BENCH_CONNECTIONS (default 10),
 * BENCH_ROUNDS (turns of bare and service per endpoint, default 9), BENCH_OTHERS=0 (skip the
 * other areas' scripts).
 * Linux only (/proc). Exit 1 when a target is missed.
 */
import { MIGRATIONS } from "../kv/store/migrations.ts";
import { accountView } from "../kv/accounts/accounts.ts";
import { ROOT, serverEnv, spawnListening, taskArgs } from "../tests/_server.ts";
import { load as loadRun, median, medianRun, rssMiB, type Run, seedAccount } from "./_http.ts";

const SECONDS = Number(Deno.env.get("BENCH_SECONDS") ?? 5);
const CONNECTIONS = Number(Deno.env.get("BENCH_CONNECTIONS") ?? 10);
const COLD_RUNS = 9;
const OTHER_BENCHES = [
  "caches",
  "search",
  "catalogue",
  "heartbeat",
  "files",
  "pages_me",
  "pages_public",
  "lighthouse",
];

/** Rounds of load per endpoint, bare and service taking turns; ratios are per-round medians. */
const ROUNDS = Number(Deno.env.get("BENCH_ROUNDS") ?? 9);

/**
 * The targets: `/api/me` CPU against its naive floor (bench/_me_floor.ts: the session and the
 * account read from KV on every request), cold start and idle RSS against the floor (the issue
 * states the memory goal as a ratio: what the service holds beyond the stack itself).
 */
const TARGETS = { meNaiveRatio: 1.3, coldStartFloorRatio: 1.25, idleRssFloorRatio: 1.1 };

interface Target {
  name: string;
  args: string[];
  env: Record<string, string>;
}

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/** Starts of each server whose idle memory is read; the figure is their median. */
const IDLE_RUNS = 5;

/**
 * Median idle RSS (MiB) of each target over IDLE_RUNS starts, taking turns: started, asked its
 * calls (each must answer 200), then left 1.5 s to settle. One start's reading varies by a MiB
 * or more (the floor's as much as the service's), as much as the goal's whole margin.
 */
async function idleRss(
  runs: { target: Target; calls: [path: string, token?: string][] }[],
): Promise<number[]> {
  const readings = runs.map(() => [] as number[]);
  for (let i = 0; i < IDLE_RUNS; i++) {
    for (const [n, { target, calls }] of runs.entries()) {
      await using s = await spawnListening(target.args, { ...target.env, PORT: "0" });
      for (const [path, token] of calls) {
        const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
        const res = await fetch(`${s.url}${path}`, { headers });
        await res.body?.cancel();
        if (res.status !== 200) {
          throw new Error(`${target.name}: GET ${path} answered ${res.status}`);
        }
      }
      await new Promise((r) => setTimeout(r, 1500));
      readings[n].push(await rssMiB(s.pid));
    }
  }
  return readings.map(median);
}

/** Milliseconds from spawn to the first 200 from /api/healthz, one start. */
async function startOnce(t: Target): Promise<number> {
  const port = freePort();
  const started = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: t.args,
    cwd: ROOT,
    env: { ...t.env, PORT: String(port) },
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  try {
    for (;;) {
      try {
        const res = await fetch(`http://127.0.0.1:${port}/api/healthz`);
        await res.body?.cancel();
        if (res.ok) return performance.now() - started;
      } catch { /* not listening yet */ }
      if (performance.now() - started > 30_000) throw new Error(`${t.name} did not start`);
      await new Promise((r) => setTimeout(r, 2));
    }
  } finally {
    child.kill("SIGKILL");
    await child.status;
  }
}

/**
 * Median cold start of each target over COLD_RUNS starts, the targets taking turns so that a
 * busy moment on the machine weighs on all of them alike. One unmeasured start each first
 * fills Deno's caches after a code change.
 */
async function coldStarts(targets: Target[]): Promise<number[]> {
  const times = targets.map(() => [] as number[]);
  for (let i = 0; i <= COLD_RUNS; i++) {
    for (const [n, t] of targets.entries()) {
      const ms = await startOnce(t);
      if (i > 0) times[n].push(ms);
    }
  }
  return times.map((ts) => ts.sort((a, b) => a - b)[Math.floor(ts.length / 2)]);
}

function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i])).join(" | ")} |`;
  return [line(rows[0]), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`]
    .concat(rows.slice(1).map(line)).join("\n");
}

const f0 = (n: number) => n.toFixed(0);
const f1 = (n: number) => n.toFixed(1);
const ratio = (a: number, b: number) => `${(a / b).toFixed(2)}x`;

async function main(): Promise<number> {
  if (Deno.build.os !== "linux") {
    console.error("deno task bench reads /proc: run it on Linux");
    return 2;
  }
  const dir = await Deno.makeTempDir({ prefix: "bench-" });
  try {
    const kvPath = `${dir}/kv.sqlite3`;
    const { token, account } = await seedAccount(kvPath);
    const me = JSON.stringify(accountView(account));
    const healthz = JSON.stringify({ ok: true, db: "ok", migrations: MIGRATIONS.length });
    const app: Target = {
      name: "service",
      args: await taskArgs("start"),
      env: serverEnv({ HOSTNAME: "127.0.0.1", KV_PATH: kvPath, BASE_URL: "http://127.0.0.1" }),
    };
    const bare: Target = {
      name: "bare",
      args: ["run", "--allow-net", "--allow-env", "bench/_bare.ts"],
      env: serverEnv({ HOSTNAME: "127.0.0.1", BARE_HEALTHZ: healthz, BARE_ME: me }),
    };

    // The floor runs with the service's V8 flags. Deno's code cache holds one compilation of
    // each module, which V8 refuses under other flags: taking turns with other flags, the two
    // would compile the modules they share (zod, Hono, kv/) again at every start.
    const floor: Target = {
      name: "floor",
      args: [
        "run",
        ...app.args.filter((word) => word.startsWith("--v8-flags=")),
        "--allow-net",
        "--allow-env",
        "--allow-read",
        "--allow-write",
        "bench/_floor.ts",
      ],
      env: app.env,
    };

    console.log(
      `bench: ${SECONDS} s per run, ${CONNECTIONS} connections, autocannon in this process, ` +
        `${navigator.hardwareConcurrency} cores, deno ${Deno.version.deno}\n`,
    );
    const [coldBare, coldFloor, coldApp] = await coldStarts([bare, floor, app]);
    const cold = { bare: coldBare, floor: coldFloor, app: coldApp };

    const rows: string[][] = [[
      "endpoint",
      "bare req/s",
      "service req/s",
      "bare p99 ms",
      "service p99 ms",
      "bare CPU µs/req",
      "service CPU µs/req",
      `CPU ratio (median of ${ROUNDS} turns)`,
    ]];
    const runs: Record<string, { bare: Run; app: Run; cpuRatio: number }> = {};
    let meNaive = { floor: NaN, app: NaN, ratio: NaN };
    const rss = { bare: 0, floor: 0, app: 0, bareLoaded: 0, appLoaded: 0 };
    [rss.bare, rss.floor, rss.app] = await idleRss([
      { target: bare, calls: [["/api/healthz"]] },
      { target: floor, calls: [["/api/healthz"]] },
      { target: app, calls: [["/api/healthz"], ["/api/me", token]] },
    ]);
    {
      await using b = await spawnListening(bare.args, { ...bare.env, PORT: "0" });
      await using a = await spawnListening(app.args, { ...app.env, PORT: "0" });
      await using n = await spawnListening(
        [
          "run",
          "--allow-net",
          "--allow-env",
          "--allow-read",
          "--allow-write",
          "bench/_me_floor.ts",
        ],
        { ...app.env, PORT: "0" },
      );
      for (const [path, auth] of [["/api/healthz", undefined], ["/api/me", token]] as const) {
        // Turns (bare, service, bare, service, ...): a busy moment of the machine weighs on both.
        // The order turns round each time, so that none is always measured first or right after
        // another's load (and its log lines, which this process reads).
        const turns: { bare: Run; app: Run; naive?: Run }[] = [];
        for (let i = 0; i < ROUNDS; i++) {
          const headers: Record<string, string> = auth ? { authorization: `Bearer ${auth}` } : {};
          const run = (s: typeof a) => loadRun(s, path, headers, SECONDS, CONNECTIONS);
          const servers = auth ? [b, n, a] : [b, a];
          const runs = new Map<typeof a, Run>();
          for (const s of i % 2 ? servers.toReversed() : servers) runs.set(s, await run(s));
          turns.push({ bare: runs.get(b)!, naive: runs.get(n), app: runs.get(a)! });
        }
        if (auth) {
          meNaive = {
            floor: medianRun(turns.map((t) => t.naive!)).cpuUs,
            app: medianRun(turns.map((t) => t.app)).cpuUs,
            ratio: median(turns.map((t) => t.app.cpuUs / t.naive!.cpuUs)),
          };
        }
        const br = medianRun(turns.map((t) => t.bare));
        const ar = medianRun(turns.map((t) => t.app));
        const cpuRatio = median(turns.map((t) => t.app.cpuUs / t.bare.cpuUs));
        runs[path] = { bare: br, app: ar, cpuRatio };
        for (const [who, r] of [["bare", br], ["service", ar]] as const) {
          if (r.errors) console.error(`${who} ${path}: ${r.errors} errors or non-2xx answers`);
        }
        rows.push([
          `GET ${path}`,
          f0(br.rps),
          f0(ar.rps),
          String(br.p99),
          String(ar.p99),
          f1(br.cpuUs),
          f1(ar.cpuUs),
          `${cpuRatio.toFixed(2)}x`,
        ]);
      }
      rss.bareLoaded = await rssMiB(b.pid);
      rss.appLoaded = await rssMiB(a.pid);
    }

    console.log(table(rows));
    console.log(
      `GET /api/me against its naive floor (bench/_me_floor.ts): ${f1(meNaive.floor)} µs/req, ` +
        `service ${f1(meNaive.app)} µs/req, ${
          meNaive.ratio.toFixed(2)
        }x (median of ${ROUNDS} turns)`,
    );
    console.log();
    console.log(table([
      ["process", "bare", "floor", "service", "floor ratio", "service ratio"],
      [
        `cold start ms (median of ${COLD_RUNS})`,
        f0(cold.bare),
        f0(cold.floor),
        f0(cold.app),
        ratio(cold.floor, cold.bare),
        ratio(cold.app, cold.bare),
      ],
      [
        `idle RSS MiB (median of ${IDLE_RUNS})`,
        f1(rss.bare),
        f1(rss.floor),
        f1(rss.app),
        ratio(rss.floor, rss.bare),
        ratio(rss.app, rss.bare),
      ],
      ["RSS after load MiB", f1(rss.bareLoaded), "", f1(rss.appLoaded), "", ""],
    ]));
    console.log(
      "floor: bench/_floor.ts, zod-validated configuration + KV + one Hono route, no service routes",
    );

    const checks: [string, boolean][] = [
      [
        `GET /api/me CPU per request <= ${TARGETS.meNaiveRatio}x its naive floor`,
        meNaive.ratio <= TARGETS.meNaiveRatio,
      ],
      [
        `cold start <= ${TARGETS.coldStartFloorRatio}x the floor's`,
        cold.app / cold.floor <= TARGETS.coldStartFloorRatio,
      ],
      [
        `idle RSS <= ${TARGETS.idleRssFloorRatio}x the floor's`,
        rss.app / rss.floor <= TARGETS.idleRssFloorRatio,
      ],
      ["no errors under load", Object.values(runs).every((r) => !r.app.errors && !r.bare.errors)],
    ];
    console.log();
    for (const [name, ok] of checks) console.log(`${ok ? "met   " : "MISSED"} ${name}`);
    let missed = checks.some(([, ok]) => !ok);

    const others = Deno.env.get("BENCH_OTHERS") === "0" ? [] : OTHER_BENCHES;
    for (const name of others) {
      const file = `bench/${name}.ts`;
      try {
        await Deno.stat(`${ROOT}${file}`);
      } catch {
        continue;
      }
      console.log(`\n## ${file}\n`);
      const { code } = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", "--lock=deno.dev.lock", file],
        cwd: ROOT,
        stdin: "null",
        stdout: "inherit",
        stderr: "inherit",
      }).output();
      if (code !== 0) {
        console.error(`${file} exited with ${code}`);
        missed = true;
      }
    }
    return missed ? 1 : 0;
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) Deno.exit(await main());
