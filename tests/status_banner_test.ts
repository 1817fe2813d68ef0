import assert from "node:assert/strict";
import { openNotes, overallBanner } from "../kv/status/page.ts";

const svc = (
  state: "ok" | "warn" | "off" | "wait",
  more: { paused?: boolean; maintenance?: boolean } = {},
) => ({
  state,
  paused: more.paused ?? false,
  maintenance: more.maintenance ?? false,
});

Deno.test("status page banner: down before maintenance before late before up", async (t) => {
  const cases: [string, ReturnType<typeof svc>[], string, string][] = [
    ["all up", [svc("ok"), svc("ok")], "ok", "All services are up"],
    ["one service up", [svc("ok")], "ok", "The service is up"],
    [
      "two of nine down",
      [...Array(7).fill(svc("ok")), svc("off"), svc("off")],
      "off",
      "2 of 9 services are down",
    ],
    ["one down", [svc("ok"), svc("off")], "off", "1 of 2 services is down"],
    [
      "down while another is in maintenance",
      [svc("off"), svc("ok", { maintenance: true })],
      "off",
      "1 of 2 services is down",
    ],
    [
      "down inside maintenance is maintenance",
      [svc("off", { maintenance: true }), svc("ok")],
      "maintenance",
      "Maintenance under way",
    ],
    ["late", [svc("warn"), svc("ok"), svc("ok")], "warn", "1 of 3 services is late"],
    [
      "paused ones are left out",
      [svc("ok"), svc("wait", { paused: true })],
      "ok",
      "The service is up",
    ],
    ["waiting only", [svc("wait")], "wait", "Waiting for the first results"],
    ["nothing watched", [svc("ok", { paused: true })], "wait", "No services are watched here now"],
  ];
  for (const [name, services, tone, text] of cases) {
    await t.step(name, () => assert.deepEqual(overallBanner(services), { tone, text }));
  }
});

Deno.test("status page: notes after the newest Resolved are the open incident", () => {
  const note = (id: number, kind: string) =>
    ({ id, kind, text: "", at: "" }) as Parameters<typeof openNotes>[0][number];
  assert.deepEqual(
    openNotes([
      note(4, "identified"),
      note(3, "note"),
      note(2, "investigating"),
      note(1, "resolved"),
    ]).map((n) => n.id),
    [4, 2],
  );
  assert.deepEqual(openNotes([note(2, "resolved"), note(1, "investigating")]), []);
  assert.deepEqual(openNotes([]), []);
});
