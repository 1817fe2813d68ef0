/**
 * The dashboard with 300 services (`deno run -A --lock=deno.dev.lock bench/dashboard.ts`): the
 * in-process time of GET /watch (page 1 of 6: 50 rows with their results and uptime), of its
 * live poll GET /watch/live, and the page's size compressed. Services are written straight into
 * the in-memory KV (the account limit is 30): half checked kinds with a day of 5-minute checks,
 * half heartbeats with 50 signals each, every one with a state change a day for 30 days.
 */
import { gzipSync } from "node:zlib";
import { DAY, HOUR } from "../lib/clock.ts";
import { testApp } from "../tests/_helpers.ts";

await using t = await testApp();
const { token, account } = await t.account("many@example.org", { name: "Many" });
const cookie = `session=${token}`;
const hb = await t.req("POST", "/api/me/services", {
  token,
  body: { name: "Seed beat", check: "webhook:" },
});
const seedBeat = hb.body.item.id as number;
const now = t.clock.now();
const beatBase = (await t.kv.get<Record<string, unknown>>(["services", account.id, seedBeat]))
  .value!;
// A checked kind's record: the heartbeat's with a url check and a last result (never run here).
const base = {
  ...beatBase,
  kind: "url",
  check: "url:https://example.org/",
  hook: null,
  last: { state: "ok", status: "HTTP 200", checked: now, ms: 45 },
  seen: "ok",
};
let op = t.kv.atomic();
let n = 0;
const flush = async () => {
  await op.commit();
  op = t.kv.atomic();
  n = 0;
};
const put = async (key: Deno.KvKey, value: unknown) => {
  op.set(key, value);
  if (++n >= 200) await flush();
};
const date = (ms: number) => new Date(ms).toISOString().slice(0, 10);
for (let i = 0; i < 300; i++) {
  const id = 10_000 + i;
  const beat = i % 2 === 1;
  const group = ["Public", "LAN and tailnet", "Data", "Jobs"][i % 4];
  await put(["services", account.id, id], {
    ...(beat ? beatBase : base),
    id,
    name: `Service ${i}`,
    group,
  });
  await put(["services_by_id", id], account.id);
  for (let d = 30; d > 0; d--) {
    await put(["service_changes", account.id, id, now - d * DAY], { state: "off", status: "down" });
    await put(["service_changes", account.id, id, now - d * DAY + HOUR / 4], {
      state: "ok",
      status: "up",
    });
  }
  if (beat) {
    for (let k = 0; k < 50; k++) {
      await put(["service_events", account.id, id, now - k * HOUR, k], {
        kind: k % 7 ? "success" : "fail",
      });
    }
  } else {
    for (const day of [now - DAY, now]) {
      const at = Array.from({ length: 288 }, (_, k) => Math.floor(day / DAY) * DAY + k * 300_000);
      await put(["service_days", account.id, id, date(day)], {
        ms: at.map((_, k) => 40 + (k % 17)),
        at,
        st: at.map((_, k) => (k % 50 ? "o" : "x")).join(""),
      });
    }
  }
}
await flush();

const time = async (path: string, runs: number) => {
  const res = await t.req("GET", path, { headers: { cookie } });
  if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
  const t0 = performance.now();
  for (let i = 0; i < runs; i++) await t.req("GET", path, { headers: { cookie } });
  return { ms: (performance.now() - t0) / runs, text: res.text };
};
const page = await time("/watch", 10);
const live = await time("/watch/live", 20);
const rows = page.text.match(/class="svc svc-/g)?.length ?? 0;
console.log(`GET /watch, 302 services, page 1 (${rows} rows): ${page.ms.toFixed(0)} ms in-process`);
console.log(`GET /watch/live (the poll): ${live.ms.toFixed(1)} ms in-process`);
console.log(
  `HTML ${(page.text.length / 1024).toFixed(1)} KB, gzip ${
    (gzipSync(page.text).length / 1024).toFixed(1)
  } KB`,
);
for (const f of ["site.css", "site.js", "live.js"]) {
  const text = await Deno.readTextFile(new URL(`../web/static/${f}`, import.meta.url));
  console.log(`${f}: gzip ${(gzipSync(text).length / 1024).toFixed(1)} KB`);
}
