/**
 * Dependencies through the real server process (issue 47, item 1): a LAN router and three
 * services behind it, heartbeats mailing through a local SMTP relay. The router fails, then the
 * three: one alert, the router's, names them; the three read unreachable (LAN router off) on the
 * dashboard. The router comes back while the three are still off: each alerts at once on its own.
 */
import assert from "node:assert/strict";
import {
  alertBench,
  arrival,
  bearerApi,
  heartbeatsReviewed,
  looksLogged,
  signInByMail,
  testClock,
} from "./_real_server.ts";
import { spawnService } from "./_server.ts";

const OWNER = "ops@deps-e2e.test";
const CHILDREN = ["NAS", "Printer", "Camera"];

Deno.test({
  name: "e2e: a parent off with three children off gives one alert naming them; back, each alerts",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using bench = await alertBench("deps_e2e_", OWNER);
    const { sink } = bench;
    await using clock = await testClock();
    await using server = await spawnService(bench.kvPath, { ...bench.env, ...clock.env });
    const token = await signInByMail(server.url, sink, OWNER);
    const api = bearerApi(server.url, token);
    const add = async (name: string, depends_on: number[] = []) => {
      const made = await api("POST", "/api/me/services", {
        name,
        check: "webhook:",
        interval: 60,
        depends_on,
      });
      return { id: made.item.id as number, hook: new URL(made.hook_url).pathname, name };
    };
    const router = await add("LAN router");
    const kids = [];
    for (const name of CHILDREN) kids.push(await add(name, [router.id]));
    const ping = async (s: { hook: string }, signal = "") => {
      const r = await fetch(`${server.url}${s.hook}${signal}`);
      assert.equal(r.status, 200);
      await r.body?.cancel();
    };
    for (const s of [router, ...kids]) await ping(s);
    await clock.runJobs();
    const offMails = () => sink.mails.filter((m) => m.to === OWNER && /" is off$/.test(m.subject));

    // The router fails, then the three behind it.
    const failed = server.stdout.text.length;
    await ping(router, "/fail");
    for (const k of kids) await ping(k, "/fail");
    // Their looks (asked through the KV queue) hold every off alert for now: once the four are
    // logged, whatever they sent is at the relay.
    const looks = () => [looksLogged(server.stdout, failed)];
    await arrival("the four looks at the failures", looks, (n) => n >= 4, 20_000);
    // The board shows the three behind the router as unreachable once all four looks are in. The
    // count above is of logged looks and runs' reviews, which a run of the wall clock's minutely
    // cron (a test server has it too) or the 2-second poll may add to: the board is asked until
    // it shows the three.
    const unreachable = async () => {
      const board = await fetch(`${server.url}/watch`, { headers: { cookie: `session=${token}` } });
      return ((await board.text()).match(/unreachable \(LAN router off\)/g) ?? []).length;
    };
    const until = Date.now() + 20_000;
    let shown = await unreachable();
    while (shown < 3 && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 100));
      shown = await unreachable();
    }
    assert.equal(shown, 3, "the board's unreachable services");
    assert.equal(offMails().length, 0, offMails().map((m) => m.subject).join(" | "));

    // The router's hold ends: one alert, naming the three. Once the run that looked at the
    // router has logged, whatever it sent is at the relay.
    const held = server.stdout.text.length;
    await clock.passMinutes("the router's alert", () => offMails().length > 0, 3);
    const reviewed = () => [heartbeatsReviewed(server.stdout, held)];
    await arrival("the run that looked at the router", reviewed, (n) => n >= 1, 20_000);
    const offs = offMails();
    assert.equal(offs.length, 1, offs.map((m) => m.subject).join(" | "));
    assert.equal(offs[0].subject, 'Watched service "LAN router" is off');
    assert.match(offs[0].text, /3 services behind it unreachable: NAS, Printer, Camera/);
    await clock.runJobs();
    assert.equal(offMails().length, 1, "the three stay held while the router is off");

    // The router is back, the three are not: once the router's look sees it back, each of the
    // three alerts at once, on its own (their looks asked through the KV queue, not a minute on).
    await ping(router);
    const backs = () =>
      sink.mails.filter((m) => m.subject === 'Watched service "LAN router" is back');
    await clock.passMinutes("the router's back", () => backs().length > 0, 3);
    await arrival("the three off alerts", () => [offMails()], (l) => l.length >= 4, 20_000);
    const own = offMails().slice(1).map((m) => m.subject).sort();
    assert.deepEqual(own, CHILDREN.map((n) => `Watched service "${n}" is off`).sort());
  },
});
