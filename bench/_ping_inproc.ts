// In-process cost of a success ping through the app (no HTTP server), for A/B work and CPU
// profiles of the heartbeat path: 1 000 heartbeats of 34 accounts on a KV file, 50 pings in
// flight, round-robin, from 5 000 addresses (X-Forwarded-For, TRUST_PROXY). Run with
// `--v8-flags=--prof` for a V8 tick profile.
import { testApp } from "../tests/_helpers.ts";
import { seedHooks } from "./heartbeat.ts";
import { configureLog, type Level } from "../lib/log.ts";
import { cpuMs } from "./_cpu.ts";
import { runDueChecks } from "../jobs/checks.ts";
configureLog((Deno.env.get("LVL") ?? "info") as Level);

const dir = await Deno.makeTempDir();
const keys = Object.keys(await seedHooks(`${dir}/kv.sqlite3`));
await using t = await testApp({ kvPath: `${dir}/kv.sqlite3`, config: { trustProxy: true } });
const env = { remoteAddr: { hostname: "127.0.0.1" } };
const body = '{"status":"ok"}';
let next = 0;
async function worker(n: number) {
  for (let i = 0; i < n; i++) {
    const k = next++;
    const res = await t.app.fetch(
      new Request(`http://127.0.0.1/api/hooks/${keys[k % keys.length]}`, {
        method: "POST",
        body,
        headers: {
          "content-type": "application/json",
          "content-length": String(body.length),
          "x-forwarded-for": `10.0.${(k % 5000) >> 8}.${(k % 5000) & 255}`,
        },
      }),
      env,
    );
    if (res.status !== 200) throw new Error(`ping answered ${res.status}`);
    await res.arrayBuffer();
  }
}
const run = async (n: number) => {
  const t0 = cpuMs();
  await Promise.all(Array.from({ length: 50 }, () => worker(n / 50)));
  return ((cpuMs() - t0) * 1000) / n;
};
await run(5000);
// The steady state: the looks the first successes asked for have run (each hook is up).
await runDueChecks(t.deps, { budgetMs: 600_000 });
await run(5000);
const out = [];
for (let i = 0; i < 5; i++) out.push(await run(10000));
out.sort((a, b) => a - b);
console.error(`POST /api/hooks/<key> in-process: ${out[2].toFixed(1)} µs/ping (CPU, median of 5)`);
await Deno.remove(dir, { recursive: true });
