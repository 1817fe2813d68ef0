/**
 * A month's uptime report through the real server process (issue 47, item 3): the test writes
 * last month's history of two services into the server's KV file (as another process on the
 * same file would), plans a maintenance window in it through the API, and reads the report as
 * JSON, as the page a person prints and as CSV: every figure is the one the written history
 * gives by the rule the report states (maintenance left out, the NAS's time off while the
 * router it depends on was off counted apart as unreachable, the rest up or down).
 */
import assert from "node:assert/strict";
import { atomic, commit, openKv } from "../kv/_atomic.ts";
import { recordChange } from "../kv/service/history.ts";
import { DAY, HOUR, MINUTE } from "../lib/clock.ts";
import { monthRange, previousMonth } from "../lib/report.ts";
import { alertBench, bearerApi, signInByMail } from "./_real_server.ts";
import { spawnService } from "./_server.ts";

const OWNER = "ops@reports-e2e.test";

Deno.test({
  name: "e2e: a month's report (JSON, page, CSV) matches the history the test wrote",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using bench = await alertBench("reports_e2e_", OWNER);
    await using server = await spawnService(bench.kvPath, bench.env);
    const token = await signInByMail(server.url, bench.sink, OWNER);
    const api = bearerApi(server.url, token);
    const me = await api("GET", "/api/me");
    const account = me.account?.id ?? me.id;
    const router = (await api("POST", "/api/me/services", {
      name: "LAN router",
      check: "webhook:",
      interval: 60,
    })).item;
    const nas = (await api("POST", "/api/me/services", {
      name: "NAS",
      check: "webhook:",
      interval: 60,
      depends_on: [router.id],
    })).item;
    const month = previousMonth(Date.now());
    const [from, to] = monthRange(month)!;
    const at = (day: number, hour: number, minute = 0) =>
      from + (day - 1) * DAY + hour * HOUR + minute * MINUTE;
    // The NAS's maintenance on the 5th, 02:00 to 04:00 UTC.
    await api("POST", "/api/me/maintenance", {
      name: "Disk swap",
      services: [nas.id],
      groups: [],
      places: [],
      from: new Date(at(5, 2)).toISOString(),
      to: new Date(at(5, 4)).toISOString(),
    });
    // The history: both up from the 1st; the router off on the 10th 10:00-11:00; the NAS off
    // on the 5th 01:00-05:00 (two hours of it in maintenance) and on the 10th 10:00-11:30.
    const kv = await openKv(bench.kvPath);
    try {
      const op = atomic(kv);
      const write = (id: number, t: number, state: "ok" | "off") =>
        recordChange(op, account, id, t, { state, status: state === "ok" ? "ok" : "missing" });
      write(router.id, from, "ok");
      write(router.id, at(10, 10), "off");
      write(router.id, at(10, 11), "ok");
      write(nas.id, from, "ok");
      write(nas.id, at(5, 1), "off");
      write(nas.id, at(5, 5), "ok");
      write(nas.id, at(10, 10), "off");
      write(nas.id, at(10, 11, 30), "ok");
      assert.ok((await commit(op)).ok);
    } finally {
      kv.close();
    }
    const total = (to - from) / 1000;

    const r = await api("GET", `/api/me/reports?month=${month}`);
    assert.match(r.rule, /maintenance window is left out/);
    const row = (name: string) => r.services.find((s: { name: string }) => s.name === name);
    const nasRow = row("NAS");
    // Maintenance left out; the hour the router was off too is unreachable, not its own.
    assert.equal(nasRow.maintenance_s, 2 * 3600);
    assert.equal(nasRow.unreachable_s, 3600);
    assert.equal(nasRow.down_s, 2 * 3600 + 30 * 60);
    assert.equal(nasRow.up_s, total - 2 * 3600 - 3600 - nasRow.down_s);
    assert.deepEqual(nasRow.depends_on, ["LAN router"]);
    assert.equal(nasRow.outages.length, 2);
    assert.equal(nasRow.outages[0].duration_s, 4 * 3600);
    assert.equal(nasRow.outages[0].down_s, 2 * 3600);
    assert.equal(nasRow.outages[1].duration_s, 90 * 60);
    assert.equal(nasRow.outages[1].down_s, 30 * 60);
    assert.equal(nasRow.longest_outage_s, 2 * 3600);
    const nasUptime = nasRow.up_s / (nasRow.up_s + nasRow.down_s);
    assert.equal(nasRow.uptime, nasUptime);
    const routerRow = row("LAN router");
    assert.equal(routerRow.down_s, 3600);
    assert.equal(routerRow.maintenance_s, 0);
    assert.equal(r.totals.outages, 3);

    // The page a person prints: the same figures in words.
    const page = await fetch(`${server.url}/me/reports?month=${month}`, {
      headers: { cookie: `session=${token}` },
    });
    const html = await page.text();
    assert.equal(page.status, 200);
    assert.match(html, /How uptime is counted/);
    const pct = `${(Math.floor(nasUptime * 100_000) / 1000).toFixed(3).replace(/\.?0+$/, "")} %`;
    assert.ok(html.includes(pct), `the NAS's uptime ${pct} on the page`);
    assert.match(html, /Outages of <bdi>NAS<\/bdi>|Outages of NAS/);
    assert.match(html, /2 h 30 min/, "the NAS's downtime");
    assert.match(html, /depends on <bdi>LAN router<\/bdi>/);
    assert.match(html, /@media print|site\.css/);

    // The CSV: one line per service, then the outages.
    const csv = await fetch(`${server.url}/me/reports/csv?month=${month}`, {
      headers: { cookie: `session=${token}` },
    });
    assert.equal(csv.status, 200);
    const lines = (await csv.text()).split("\r\n");
    const nasLine = lines.find((l) => l.startsWith("NAS,webhook,"))!.split(",");
    const head = lines[0].split(",");
    const cell = (name: string) => nasLine[head.indexOf(name)];
    assert.equal(Number(cell("down_s")), nasRow.down_s);
    assert.equal(Number(cell("maintenance_s")), 2 * 3600);
    assert.equal(Number(cell("unreachable_s")), 3600);
    assert.equal(Number(cell("outages")), 2);
    assert.equal(cell("uptime_percent"), (Math.floor(nasUptime * 1_000_000) / 10_000).toFixed(4));
    const outageLines = lines.filter((l) => /^NAS,\d{4}-/.test(l));
    assert.equal(outageLines.length, 2);
    assert.match(outageLines[0], /,14400,7200,$/);
    assert.match(outageLines[1], /,5400,1800,$/);
  },
});
