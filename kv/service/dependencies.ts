import { invalid } from "../../lib/errors.ts";
import type { Service } from "./state.ts";

/**
 * Dependencies between an account's services ("the NAS depends on the LAN router"): the rules
 * of choosing them (the account's own services, at most MAX_DEPENDS, never a cycle), and what
 * they do to what is shown: a service that is off while a service it depends on is off reads
 * "unreachable (<parent> off)", not down, and its downtime is counted apart (lib/report.ts).
 * Holds no keys: the ids live on the record (`depends_on`), written by kv/service/commands.ts.
 */

const MAX_DEPENDS = 10;

type Node = Pick<Service, "id" | "name"> & { depends_on?: number[] };

/**
 * Checks the services `id` (null: a new one, which nothing depends on yet) would depend on,
 * among the account's `all`; answers them without repeats, or refuses in a plain sentence
 * naming `depends_on`.
 */
export function checkDependencies(all: Node[], id: number | null, wanted: number[]): number[] {
  const ids = [...new Set(wanted)];
  if (ids.length > MAX_DEPENDS) {
    invalid(`depends_on: at most ${MAX_DEPENDS} services`, "depends_on");
  }
  const byId = new Map(all.map((s) => [s.id, s]));
  for (const p of ids) {
    if (p === id) invalid("depends_on: a service cannot depend on itself", "depends_on");
    if (!byId.has(p)) invalid(`depends_on: ${p} is not one of your services`, "depends_on");
  }
  if (id === null) return ids;
  // A cycle: `id` reachable again from one of the services it would depend on.
  const self = byId.get(id)?.name ?? "this service";
  for (const p of ids) {
    const path = pathTo(byId, p, id);
    if (path) {
      const through = path.slice(1, -1).map((x) => `"${x}"`);
      invalid(
        `depends_on: "${byId.get(p)!.name}" already depends on "${self}"` +
          (through.length ? ` (through ${through.join(", ")})` : "") +
          ", and a service cannot depend on itself, even through others",
        "depends_on",
      );
    }
  }
  return ids;
}

/** The names from `from` to `to` along dependencies, or null when `to` is not reached. */
function pathTo(byId: Map<number, Node>, from: number, to: number): string[] | null {
  const seen = new Set<number>();
  const walk = (at: number): string[] | null => {
    if (seen.has(at)) return null;
    seen.add(at);
    const node = byId.get(at);
    if (!node) return null;
    for (const next of node.depends_on ?? []) {
      if (next === to) return [node.name, byId.get(to)?.name ?? ""];
      const rest = walk(next);
      if (rest) return [node.name, ...rest];
    }
    return null;
  };
  return walk(from);
}

/**
 * For each service that is off while one it depends on is off: the names of those parents.
 * `states` holds each service's state as judged now (its view's).
 */
export function unreachableVia(
  list: (Node & { state: string })[],
): Map<number, string[]> {
  const byId = new Map(list.map((s) => [s.id, s]));
  const out = new Map<number, string[]>();
  for (const s of list) {
    if (s.state !== "off") continue;
    const off = (s.depends_on ?? []).map((p) => byId.get(p)).filter((p) => p?.state === "off");
    if (off.length) out.set(s.id, off.map((p) => p!.name));
  }
  return out;
}

/** "unreachable (LAN router off)": what a service behind an off parent reads. */
export const unreachableWords = (parents: string[]) => `unreachable (${parents.join(", ")} off)`;

/**
 * How long a service that others depend on holds its off alert after it turns off, so the
 * services behind it that go off with it are named in that one alert rather than alerting each
 * ("LAN router off — 3 services behind it unreachable: …").
 */
const FOLD_WAIT_MS = 30_000;

type Held = Pick<Service, "id" | "name" | "seen" | "since" | "held"> & { depends_on?: number[] };

/**
 * Until when a look that finds `s` in `state` holds its off alert because of its dependencies
 * (as a maintenance window holds one, kv/alerts/alert_rules.ts), or null: while a service it depends
 * on is off (a minute at a time: it is looked at again), and for FOLD_WAIT_MS after it turned
 * off when others depend on it. `all`: the account's services as stored.
 */
export function dependencyHold(all: Held[], s: Held, state: string, now: number): number | null {
  if (state !== "off") return null;
  const parents = all.filter((p) => s.depends_on?.includes(p.id) && p.seen === "off");
  if (parents.length) return now + 60_000;
  if (!all.some((c) => c.depends_on?.includes(s.id))) return null;
  const offAt = s.seen === "off" ? s.since ?? now : now;
  return now < offAt + FOLD_WAIT_MS ? offAt + FOLD_WAIT_MS : null;
}

/** The services behind `s` that are off now, as its off alert names them. */
export function behindOff<T extends Held>(all: T[], s: Pick<Service, "id">): T[] {
  return all.filter((c) => c.depends_on?.includes(s.id) && c.seen === "off");
}

/** "LAN router off — 3 services behind it unreachable: NAS, Printer, Camera". */
export function foldedText(status: string, behind: { name: string }[]): string {
  if (!behind.length) return status;
  const n = behind.length;
  return `${status} — ${n} service${n === 1 ? "" : "s"} behind it unreachable: ${
    behind.map((c) => c.name).join(", ")
  }`;
}
