// In-process cost of GET /api/me through the app (no HTTP), for A/B work on the request path.
import { testApp } from "../tests/_helpers.ts";
import { configureLog, type Level } from "../lib/log.ts";
import { cpuMs } from "./_cpu.ts";
configureLog((Deno.env.get("LVL") ?? "info") as Level);
// KV_FILE=1: a KV file as a self-hosted server has; else the in-memory KV.
const dir = Deno.env.get("KV_FILE") ? await Deno.makeTempDir() : null;
await using t = await testApp(dir ? { kvPath: `${dir}/kv.sqlite3` } : {});
const { token } = await t.account("me@example.org");
const env = { remoteAddr: { hostname: "127.0.0.1" } };
const run = async (n: number) => {
  const t0 = cpuMs();
  for (let i = 0; i < n; i++) {
    const res = await t.app.fetch(
      new Request("http://x/api/me", { headers: { authorization: `Bearer ${token}` } }),
      env,
    );
    await res.arrayBuffer();
  }
  return ((cpuMs() - t0) * 1000) / n;
};
await run(3000);
const out = [];
for (let i = 0; i < 5; i++) out.push(await run(10000));
out.sort((a, b) => a - b);
console.error(`GET /api/me in-process: ${out[2].toFixed(1)} µs/req (CPU, median of 5 × 10000)`);
