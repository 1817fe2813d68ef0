import assert from "node:assert/strict";
import { ROOT } from "./_server.ts";

/**
 * The layout rules of docs/architecture.md, checked on the real import graph (`deno info
 * --json` over every module of every entry point: main.ts, app.ts and each file of
 * http/, api/, kv/, lib/, mail/, web/, jobs/, cli/, bench/) and on the sources' KV key literals
 * against the owners listed in docs/kv.md.
 */

const FOLDERS = ["http", "api", "kv", "lib", "mail", "web", "jobs", "cli", "bench"];
const SOURCE = /\.tsx?$/;

async function sourceFiles(): Promise<string[]> {
  const out = ["main.ts", "app.ts", "areas.ts"];
  const walk = async (dir: string) => {
    let entries: Deno.DirEntry[];
    try {
      entries = [...Deno.readDirSync(`${ROOT}${dir}`)];
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) return;
      throw err;
    }
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory) await walk(path);
      else if (SOURCE.test(e.name) && !e.name.endsWith(".d.ts")) out.push(path);
    }
  };
  for (const f of FOLDERS) await walk(f);
  return out;
}

interface Edge {
  from: string;
  to: string;
  kind: "code" | "type";
  dynamic: boolean;
}

/** Every import between the project's own modules, from `deno info --json`. */
async function importGraph(): Promise<{ modules: Set<string>; edges: Edge[] }> {
  const files = await sourceFiles();
  const dir = await Deno.makeTempDir();
  try {
    const root = `${dir}/roots.ts`;
    await Deno.writeTextFile(
      root,
      files.map((f) => `import ${JSON.stringify(new URL(f, `file://${ROOT}`).href)};\n`).join(""),
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json", "--no-lock", "--config", `${ROOT}deno.json`, root],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    const info = JSON.parse(new TextDecoder().decode(out.stdout)) as {
      modules: {
        specifier: string;
        dependencies?: {
          code?: { specifier?: string };
          type?: { specifier?: string };
          isDynamic?: boolean;
        }[];
      }[];
    };
    const base = new URL(".", `file://${ROOT}`).href;
    const own = (s?: string) => s?.startsWith(base) ? s.slice(base.length) : null;
    const modules = new Set<string>();
    const edges: Edge[] = [];
    for (const m of info.modules) {
      const from = own(m.specifier);
      if (!from) continue;
      modules.add(from);
      for (const d of m.dependencies ?? []) {
        for (const kind of ["code", "type"] as const) {
          const to = own(d[kind]?.specifier);
          if (to) edges.push({ from, to, kind, dynamic: d.isDynamic ?? false });
        }
      }
    }
    for (const f of files) assert.ok(modules.has(f), `${f} is in the graph`);
    return { modules, edges };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const graph = importGraph();
const folder = (path: string) => path.includes("/") ? path.slice(0, path.indexOf("/")) : path;

/**
 * What a folder must not import (docs/architecture.md). The two doors, api/ (JSON) and web/
 * (pages), share only http/ (and what lies below it); the route table that names both is
 * the entry's (app.ts).
 */
const FORBIDDEN: Record<string, string[]> = {
  lib: ["kv", "http", "api", "web", "mail", "jobs", "cli", "bench"],
  mail: ["kv", "http", "api", "web", "jobs", "cli", "bench"],
  kv: ["http", "api", "web", "jobs", "cli", "bench"],
  http: ["api", "web", "jobs", "cli", "bench"],
  api: ["web", "jobs", "cli", "bench"],
  web: ["api", "jobs", "cli", "bench"],
};

/**
 * What a process holds before any work comes (docs/performance.md, idle RSS): main.ts, the
 * pulse it leaves at start and the poll every 2 s load, by static imports, none of the runner,
 * the checkers, the looks and the delivery paths; the first due item or request that needs
 * them imports them. Neither they nor `GET /api/me`'s area call the global `setTimeout` or
 * `setInterval`, whose first call loads Deno's Node timer layer (lib/timers.ts).
 */
Deno.test("layout: a start and an idle poll load no runner, checker, look or delivery path", async () => {
  const { edges } = await graph;
  const loaded = staticClosure(edges, ["main.ts", "jobs/poll.ts", "jobs/pulse.ts"]);
  for (
    const heavy of [
      "jobs/checks.ts",
      "jobs/watchdog.ts",
      "lib/checks/mod.ts",
      "kv/service/looks.ts",
      "kv/service/commands.ts",
      "kv/alerts/outbox.ts",
      "kv/alerts/channels.ts",
    ]
  ) {
    assert.ok(!loaded.has(heavy), `${heavy} is loaded at start`);
  }
  assert.ok(loaded.has("kv/alerts/alert_groups.ts"), "the poll reads the alert groups' due index");
  // A signed-in person's first request, `GET /api/me`, loads its one area (areas.ts mounts by
  // method there): not the profile's and the erasure's, not the checkers, not the delivery path
  // (an application's decision mails through the outbox; reading the latest needs none of it).
  const meArea = staticClosure(edges, ["api/me.ts"]);
  for (
    const other of [
      "api/profile.ts",
      "api/export.ts",
      "lib/checks/mod.ts",
      "kv/alerts/outbox.ts",
      "kv/alerts/channels.ts",
    ]
  ) {
    assert.ok(!meArea.has(other), `${other} is loaded by GET /api/me`);
  }
  const timers = [...new Set([...loaded, ...meArea])].filter((m) =>
    /\bset(Timeout|Interval)\(/.test(
      Deno.readTextFileSync(new URL(`../${m}`, import.meta.url)).replace(/^\s*(\/\/|\*).*$/gm, ""),
    )
  );
  assert.deepEqual(timers, [], "use lib/timers.ts on the start's and the idle paths");
});

/**
 * The sign-in area (the sign-in page, the page a mailed link opens, GET /api/verify) loads, by
 * static imports, none of the parts of export and erasure: they hold most of kv/ (a watched
 * service's commands, the files, the status pages) and load with the first completed link
 * (kv/parts/after_link.ts).
 */
Deno.test("layout: the sign-in page and the link's answer load no part of export and erasure", async () => {
  const { edges } = await graph;
  for (const area of ["web/sign_in.tsx", "api/sign_in.ts"]) {
    const loaded = staticClosure(edges, [area]);
    for (const heavy of ["kv/parts/mod.ts", "kv/service/commands.ts", "kv/parts/erasure.ts"]) {
      assert.ok(!loaded.has(heavy), `${area} loads ${heavy}`);
    }
  }
});

/** Every module `roots` import by static code imports, the roots included. */
function staticClosure(edges: Edge[], roots: string[]): Set<string> {
  const loaded = new Set<string>();
  const next = [...roots];
  while (next.length) {
    const m = next.pop()!;
    if (loaded.has(m)) continue;
    loaded.add(m);
    for (const e of edges) if (e.from === m && e.kind === "code" && !e.dynamic) next.push(e.to);
  }
  return loaded;
}

Deno.test("layout: each folder imports only the folders below it", async () => {
  const { edges } = await graph;
  const bad = edges
    .filter((e) => FORBIDDEN[folder(e.from)]?.includes(folder(e.to)))
    .map((e) => `${e.from} -> ${e.to} (${e.kind}${e.dynamic ? ", dynamic" : ""})`);
  assert.deepEqual(bad, []);
});

/**
 * Modules that may build and commit Deno's atomics themselves: the commit path (and its lock
 * waits), and the record trail that it runs after a commit (its atomics write only trail keys,
 * which nothing follows).
 */
const RAW_WRITERS = ["kv/_atomic.ts", "kv/_locked.ts", "kv/store/trail.ts"];
const PRODUCT = ["http", "api", "web", "kv", "lib", "mail", "jobs", "cli"];

Deno.test("layout: every write goes through the commit path, which no import changes", async () => {
  const bad: string[] = [];
  for (const file of await sourceFiles()) {
    if (!PRODUCT.includes(folder(file)) && !["main.ts", "app.ts", "areas.ts"].includes(file)) {
      continue;
    }
    const text = code(await Deno.readTextFile(`${ROOT}${file}`));
    const lineOf = (i: number) => text.slice(0, i).split("\n").length;
    for (const m of text.matchAll(/new Proxy\b/g)) bad.push(`${file}:${lineOf(m.index)} Proxy`);
    if (RAW_WRITERS.includes(file)) continue;
    // Deno's own atomics and writes: kv/_atomic.ts atomic() and commit() instead.
    const raw = /\.atomic\(\)|\.commit\(\)|\bkv\.(?:set|delete|enqueue)\(/g;
    for (const m of text.matchAll(raw)) bad.push(`${file}:${lineOf(m.index)} ${m[0]}`);
  }
  assert.deepEqual(bad, []);
  // The commit path names what follows a commit; nothing registers itself with it.
  const atomic = await Deno.readTextFile(`${ROOT}kv/_atomic.ts`);
  assert.match(atomic, /kickTrail\(/);
  const { edges } = await graph;
  assert.ok(edges.some((e) => e.from === "kv/_atomic.ts" && e.to === "kv/store/trail.ts"));
});

Deno.test("layout: no module is imported for its side effects alone", async () => {
  // A bare `import "./x.ts"` can only be there for what x does when it loads: registering
  // itself somewhere. Behaviour is called by name instead (issue 23).
  const bad: string[] = [];
  for (const file of await sourceFiles()) {
    if (!PRODUCT.includes(folder(file)) && !["main.ts", "app.ts", "areas.ts"].includes(file)) {
      continue;
    }
    const text = code(await Deno.readTextFile(`${ROOT}${file}`));
    for (const m of text.matchAll(/^\s*import\s+["'][^"']+["'];?/gm)) {
      bad.push(`${file}:${text.slice(0, m.index).split("\n").length} ${m[0].trim()}`);
    }
  }
  assert.deepEqual(bad, []);
});

Deno.test("layout: the import graph holds no cycle (type-only and dynamic imports too)", async () => {
  const { modules, edges } = await graph;
  const next = new Map<string, string[]>();
  for (const e of edges) next.set(e.from, [...next.get(e.from) ?? [], e.to]);
  // Tarjan's strongly connected components: any with two or more modules is a cycle.
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const part: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        part.push(w);
      } while (w !== v);
      if (part.length > 1) cycles.push(part.sort());
    }
  };
  for (const m of [...modules].sort()) if (!index.has(m)) visit(m);
  const selfLoops = edges.filter((e) => e.from === e.to).map((e) => [e.from]);
  assert.deepEqual([...cycles, ...selfLoops], []);
});

/** Owner of each key prefix, from the table in docs/kv.md. */
async function owners(): Promise<Map<string, string>> {
  const doc = await Deno.readTextFile(`${ROOT}docs/kv.md`);
  const out = new Map<string, string>();
  for (const m of doc.matchAll(/^\|\s*`\["([a-z][a-z0-9_]*)"[^`]*`\s*\|.*\|\s*(\S+)\s*\|\s*$/gm)) {
    const [, prefix, owner] = m;
    assert.ok(!out.has(prefix) || out.get(prefix) === owner, `${prefix}: one owner`);
    out.set(prefix, owner);
  }
  return out;
}

/** The source without comments, so key layouts written in headers do not count. */
const code = (text: string) =>
  text.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, " "))
    .replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");

/**
 * A string literal opening an array in a key position: a key builder's result (`=> [`), a
 * list's `prefix`/`start`/`end`, or the key argument of a KV read or write.
 */
const KEY_LITERAL =
  /(?:=>\s*|(?:prefix|start|end|key):\s*|\b(?:get|set|delete|sum|min|max|check|getMany|watch)(?:<[^>()]*>)?\(\s*\[?\s*|(?:const|let)\s+\w*(?:key|Key|KEY|VERSION|GEN)\w*\s*=\s*)\[\s*"([a-z][a-z0-9_]*)"/g;

/**
 * Modules allowed to name another module's keys, and why. bench/ seeds and inspects storage
 * directly (a benchmark's setup must not be measured through the code under test); tests/ is
 * not scanned for the same reason.
 */
const EXEMPT_FOLDERS = ["bench"];

Deno.test("layout: every KV key literal is in docs/kv.md and in its owner's module", async () => {
  const table = await owners();
  assert.ok(table.size > 20, "docs/kv.md lists the prefixes");
  for (const owner of new Set(table.values())) {
    assert.match(owner, /^kv\/.+\.ts$/, `${owner}: owners are kv/ modules`);
  }
  const bad: string[] = [];
  const seen = new Set<string>();
  for (const file of await sourceFiles()) {
    if (EXEMPT_FOLDERS.includes(folder(file))) continue;
    const text = code(await Deno.readTextFile(`${ROOT}${file}`));
    for (const m of text.matchAll(KEY_LITERAL)) {
      const prefix = m[1];
      const line = text.slice(0, m.index).split("\n").length;
      const owner = table.get(prefix);
      if (owner === undefined) bad.push(`${file}:${line} ["${prefix}"] is not in docs/kv.md`);
      else if (owner !== file) bad.push(`${file}:${line} ["${prefix}"] belongs to ${owner}`);
      else seen.add(prefix);
    }
  }
  assert.deepEqual(bad, []);
  // The table stays true: each owner's code names its prefix (in a key, or a constant).
  const unused = [];
  for (const [prefix, owner] of table) {
    if (seen.has(prefix)) continue;
    const text = code(await Deno.readTextFile(`${ROOT}${owner}`).catch(() => ""));
    if (!text.includes(`"${prefix}"`)) unused.push(`${prefix} (${owner})`);
  }
  assert.deepEqual(unused, [], "prefixes in docs/kv.md whose owner never names them");
});

Deno.test("layout: one delivery path: kv/alerts/outbox.ts owns the deliveries' queue and alone sends", async () => {
  const table = await owners();
  // The one queue, and the prefixes of the queues it replaced (read only by its migration).
  for (const prefix of ["outbox", "channel_outbox", "follow_fanout"]) {
    assert.equal(table.get(prefix), "kv/alerts/outbox.ts", `["${prefix}"]`);
  }
  const files = await sourceFiles();
  for (const m of ["outbox", "alert_rules", "alert_groups", "grouped_alerts"]) {
    assert.ok(files.includes(`kv/alerts/${m}.ts`), `kv/alerts/${m}.ts`);
  }
  const bad: string[] = [];
  for (const file of files) {
    if (file === "kv/alerts/outbox.ts") continue;
    const text = code(await Deno.readTextFile(`${ROOT}${file}`));
    if (/\bmailer\.send\(/.test(text)) bad.push(`${file} sends mail itself`);
    if (file !== "kv/alerts/channels.ts" && /\bsendPost\(/.test(text)) {
      bad.push(`${file} posts to a channel itself`);
    }
  }
  assert.deepEqual(bad, []);
});

/**
 * The names a kv/ module exports that make or hand out its keys: an export whose definition
 * holds a key literal (`export const xKey = (...) => ["x", ...]`, `export function`, a
 * constant key, `rateKey`'s `{ key }`) or uses such a name of its own module (`getAccount`,
 * `countersOf`: their entries and results carry the module's keys).
 */
function keyMakers(text: string): Set<string> {
  const defs = new Map<string, string>();
  const starts = [...text.matchAll(/^export (?:async )?(?:function\*? |const |let )(\w+)/gm)];
  const tops = [...text.matchAll(/^\S/gm)].map((m) => m.index!);
  for (const m of starts) {
    const end = tops.find((i) => i > m.index! && !/^[})\]]/.test(text.slice(i))) ?? text.length;
    defs.set(m[1], text.slice(m.index!, end));
  }
  const own = new Set<string>();
  for (const [name, def] of defs) {
    if ([...def.matchAll(KEY_LITERAL)].length || RETURNED_KEY.test(def)) own.add(name);
  }
  for (let grew = true; grew;) {
    grew = false;
    for (const [name, def] of defs) {
      if (own.has(name)) continue;
      if ([...own].some((o) => new RegExp(`\\b${o}\\b`).test(def.replace(/^.*?\(/s, "")))) {
        own.add(name);
        grew = true;
      }
    }
  }
  return own;
}

/** A key literal a function returns (`return ["x", id];`). */
const RETURNED_KEY = /\breturn\s+\[\s*"[a-z][a-z0-9_]*"/;

/** What `file` imports from other modules: name -> the module's path from the root. */
function importsOf(file: string, text: string): Map<string, string> {
  const out = new Map<string, string>();
  const found = [
    ...text.matchAll(/import\s*(?:type\s*)?\{([^}]*)\}\s*from\s*"([^"]+)"/g),
    // What a module takes from a dynamic import (a migration's step).
    ...text.matchAll(/const\s*\{([^}]*)\}\s*=\s*await\s+import\(\s*"([^"]+)"\s*\)/g),
  ];
  for (const imp of found) {
    if (!imp[2].startsWith(".")) continue;
    const from = new URL(imp[2], `file:///${file}`).pathname.slice(1);
    for (const part of imp[1].split(",")) {
      const [name, alias] = part.trim().replace(/^type /, "").split(/\s+as\s+|\s*:\s*/);
      if (name) out.set(alias ?? name, from);
    }
  }
  return out;
}

/** A KV write's key argument: `op.set(k`, `.delete(e.key`, `.sum([...prefix(a), n]`. */
const WRITE =
  /([\w$)\]]+)\s*\.(?:set|delete|sum|min|max)\(\s*(?:\[\s*\.\.\.\s*)?([A-Za-z_$][\w$]*)(?:(?:\.[\w$]+)*?\.key\b|\s*[(,)\]])/g;

/**
 * The foreign key makers a written key comes from: the key's own expression, or (for a
 * variable: `e.key`, `c.key`, `key`) the nearest binding before the write (`const e = await
 * getAccount(...)`, `for await (const e of kv.list({ prefix: x(...) }))`, `for (const c of
 * held)`), followed back through other variables.
 */
function foreignSources(
  text: string,
  at: number,
  head: string,
  foreign: (name: string) => string | undefined,
  depth = 0,
): string[] {
  const from = foreign(head);
  if (from) return [`${head} of ${from}`];
  if (depth > 4) return [];
  const v = head.replace(/\$/g, "\\$");
  const binding = new RegExp(
    String
      .raw`(?:(?:const|let|var)\s+(?:${v}\b|\{[^}=]*\b${v}\b[^}=]*\}|\[[^\]=]*\b${v}\b[^\]=]*\])\s*(?::[^=;]+)?=\s*([^;]*)|for\s*(?:await\s*)?\(\s*(?:const|let)\s+(?:${v}\b|\{[^}]*\b${v}\b[^}]*\}|\[[^\]]*\b${v}\b[^\]]*\])\s+of\s+([^;]*?)\)\s*[\n{a-z])`,
    "g",
  );
  // Within the enclosing top-level statement: a parameter is not followed into another function.
  const top = Math.max(
    0,
    ...[...text.slice(0, at).matchAll(/^(?![})\]])\S/gm)].map((m) => m.index!),
  );
  const before = [...text.slice(top, at).matchAll(binding)].at(-1);
  if (!before) return [];
  const init = (before[1] ?? before[2] ?? "").replace(/^\s*await\s+/, "");
  // Where the value comes from: the functions it calls, or the variable it starts from.
  const ids = new Set(init.match(/(?<![.\w$])[A-Za-z_$][\w$]*(?=\s*(?:<[^<>()]*>)?\()/g) ?? []);
  const lead = init.match(/^[A-Za-z_$][\w$]*(?![\w$]*\s*\()/)?.[0];
  if (lead) ids.add(lead);
  // A KV read's key is where the entry's key comes from: `kv.get(e.key)`.
  const read = init.match(/\.(?:get|getMany|list)\s*(?:<[^()]*>)?\(([\s\S]*)\)/)?.[1] ?? "";
  for (const id of read.match(/(?<![.\w$])[A-Za-z_$][\w$]*/g) ?? []) ids.add(id);
  const out: string[] = [];
  for (const id of ids) {
    if (id === head) continue;
    out.push(...foreignSources(text, top + before.index!, id, foreign, depth + 1));
  }
  return out;
}

/** Writes in `file` through keys that another kv/ module makes ("file:line writes x of y"). */
function foreignWrites(file: string, text: string, makers: Map<string, Set<string>>): string[] {
  const imports = importsOf(file, text);
  const foreign = (name: string) => {
    const from = imports.get(name);
    return from && from !== file && makers.get(from)?.has(name) ? from : undefined;
  };
  const bad: string[] = [];
  for (const m of text.matchAll(WRITE)) {
    // A Map's or Set's set and delete, and Math.min and max, are no KV writes.
    const maps = new RegExp(
      `\\b${m[1].replace(/\W/g, "")}\\s*[:=]\\s*new\\s+(?:Weak)?(?:Map|Set)\\b`,
    );
    if (m[1] === "Math" || (/^[\w$]+$/.test(m[1]) && maps.test(text))) continue;
    const line = text.slice(0, m.index).split("\n").length;
    for (const s of new Set(foreignSources(text, m.index! + m[1].length, m[2], foreign))) {
      bad.push(`${file}:${line} writes a key of ${s}: use its mutators`);
    }
  }
  return bad;
}

Deno.test("layout: one writer per key prefix: no module writes a key another module makes", async () => {
  const files = await sourceFiles();
  const makers = new Map<string, Set<string>>();
  for (const file of files.filter((f) => folder(f) === "kv")) {
    makers.set(file, keyMakers(code(await Deno.readTextFile(`${ROOT}${file}`))));
  }
  for (
    const [file, name] of [
      ["kv/accounts/accounts.ts", "accountKey"],
      ["kv/service/store.ts", "dueKey"],
      ["kv/service/heartbeats.ts", "hookKey"],
      ["kv/store/rate_limit.ts", "rateKey"],
      ["kv/store/rate_limit.ts", "countersOf"],
      ["kv/catalogue/modules.ts", "VERSION_KEY"],
      ["kv/accounts/accounts.ts", "getAccount"],
    ]
  ) {
    assert.ok(makers.get(file)?.has(name), `${name} of ${file} is found as a key maker`);
  }
  const bad: string[] = [];
  for (const file of files) {
    if (EXEMPT_FOLDERS.includes(folder(file))) continue;
    bad.push(...foreignWrites(file, code(await Deno.readTextFile(`${ROOT}${file}`)), makers));
  }
  assert.deepEqual(bad, []);
});

Deno.test("layout: the writer scan finds writes through another module's keys", () => {
  const makers = new Map([
    [
      "kv/a.ts",
      keyMakers(code(`
export const aKey = (id: number) => ["a", id] as const;
export const A_VERSION = ["a_version"] as const;
export function rowKey(id: number): Deno.KvKey {
  return ["a_rows", id];
}
export async function getA(kv: Deno.Kv, id: number) {
  return await kv.get(aKey(id));
}
export async function listA(kv: Deno.Kv) {
  return await Array.fromAsync(kv.list({ prefix: rowKey(0).slice(0, 1) }));
}
export const LIMIT = 5;
`)),
    ],
  ]);
  const scan = (src: string) =>
    foreignWrites(
      "kv/b.ts",
      code(`import { A_VERSION, aKey, getA, LIMIT, listA, rowKey } from "./a.ts";
async function f(kv: Deno.Kv, op: Atomic, x: unknown) {
  ${src.replaceAll("\n", "\n  ")}
}`),
      makers,
    )
      .map((s) => s.replace(/^kv\/b\.ts:\d+ writes a key of (\w+) of kv\/a\.ts: .*$/, "$1"));
  assert.deepEqual(scan(`op.set(aKey(1), x);`), ["aKey"]);
  assert.deepEqual(scan(`op.sum(A_VERSION, 1n);`), ["A_VERSION"]);
  assert.deepEqual(scan(`op.set([...rowKey(1), 2], x);`), ["rowKey"]);
  assert.deepEqual(scan(`const e = await getA(kv, 1);\nop.check(e).delete(e.key);`), ["getA"]);
  assert.deepEqual(scan(`const k = aKey(2);\nop.delete(k);`), ["aKey"]);
  assert.deepEqual(
    scan(
      `const rows = await listA(kv);\nfor (const r of rows) await commit(atomic(kv).delete(r.key));`,
    ),
    ["listA"],
  );
  assert.deepEqual(
    scan(`for await (const e of kv.list({ prefix: rowKey(1) })) op.delete(e.key);`),
    ["rowKey"],
  );
  assert.deepEqual(
    scan(`for (const e of await listA(kv)) {
  const entry = await kv.get(e.key);
  op.check(entry).set(entry.key, x);
}`),
    ["listA"],
  );
  // Reads, checks and the module's own keys are no writes of another's.
  assert.deepEqual(scan(`const e = await getA(kv, 1);\nop.check(e).set(["b", 1], LIMIT);`), []);
  assert.deepEqual(scan(`const m = new Map();\nm.set(LIMIT, 1);`), []);
  assert.deepEqual(scan(`const n = (await listA(kv)).length;\nconst most = Math.max(n, 1);`), []);
  assert.deepEqual(
    scan(`const e = await getA(kv, 1);\nconst f = await kv.get(["b", 1]);\nop.delete(f.key);`),
    [],
  );
});

Deno.test("layout: the key scan finds key literals and skips comments", () => {
  const found = (src: string) => [...code(src).matchAll(KEY_LITERAL)].map((m) => m[1]);
  assert.deepEqual(found(`const k = (id: number) => ["accounts", id] as const;`), ["accounts"]);
  assert.deepEqual(found(`kv.list({ prefix: ["beats", account] })`), ["beats"]);
  assert.deepEqual(found(`await kv.get<Account>(["accounts", 1]);`), ["accounts"]);
  assert.deepEqual(found(`op.set(["trail", l.seq], l)`), ["trail"]);
  assert.deepEqual(found(`const key = ["rate", end, name, hash];`), ["rate"]);
  assert.deepEqual(found(`export const POINTS_VERSION = ["points_version"] as const;`), [
    "points_version",
  ]);
  assert.deepEqual(found(`kv.getMany([["hooks", h], GEN])`), ["hooks"]);
  assert.deepEqual(found(`// kv.get(["accounts", 1])\n/* prefix: ["files"] */`), []);
  assert.deepEqual(found(`tags: ["files"], z.enum(["keep", "remove"])`), []);
});

/**
 * What makes a second handler style in api/, and where (`file:line`): a route declared apart
 * from its handler (a named `createRoute` constant), a `security` written by hand or a token
 * guard listed as a route's middleware (the helpers of http/guards.ts declare and apply both
 * together), a route added with Hono's own methods (not in the OpenAPI document).
 */
export function secondHandlerStyle(file: string, source: string): string[] {
  const found: string[] = [];
  const lines = source.split("\n");
  const rules: [RegExp, string][] = [
    [/=\s*(\([^)]*\)\s*=>\s*)?(createRoute|bearer|team|secured\([^)]*\))\(\{/, "a route apart"],
    [/^\s*security\s*:|\bsecurity,\s*$/, "a hand-written security"],
    [/\b(requireToken|requireTeam|requireOwner)\(/, "a token guard outside the route helpers"],
    [/\bapp\.(get|post|put|patch|delete|on|all)\(/, "a route outside app.openapi"],
  ];
  lines.forEach((line, i) => {
    for (const [re, what] of rules) if (re.test(line)) found.push(`${file}:${i + 1}: ${what}`);
  });
  // Every route's declaration is the first argument of its app.openapi call.
  const declared = source.match(/\n\s*method: "(get|post|put|patch|delete)",/g)?.length ?? 0;
  const inline = source.match(/app\.openapi\(\s*\w+\(\{\s*method: "/g)?.length ?? 0;
  if (declared !== inline) found.push(`${file}: ${declared - inline} routes declared apart`);
  return found;
}

Deno.test("layout: api/ has one handler style: app.openapi(helper({...}), handler)", async () => {
  // Other products' ping addresses, answered as those products answer them: plain routes,
  // outside this service's document.
  const files = (await sourceFiles()).filter((f) =>
    f.startsWith("api/") && f !== "api/compat_pings.ts" && f !== "api/oai.ts"
  );
  const found: string[] = [];
  for (const f of files) {
    found.push(...secondHandlerStyle(f, await Deno.readTextFile(`${ROOT}${f}`)));
  }
  assert.deepEqual(found, []);
});

Deno.test("layout: the handler style check finds each second style", () => {
  const cases = [
    'const getThing = createRoute({\n  method: "get",',
    'const getThing = (deps: Deps) =>\n  createRoute({\n  method: "get",',
    '  app.openapi(\n    createRoute({\n      method: "get",\n      security: bearer,',
    "      middleware: [requireToken(deps)],",
    '  app.get("/thing", (c) => c.json({}));',
    '  app.openapi(getThing, (c) => c.json({}));\n  method: "get",',
  ];
  for (const source of cases) {
    assert.notDeepEqual(secondHandlerStyle("api/x.ts", source), [], source);
  }
  const good = '  app.openapi(\n    bearer({\n      method: "get",\n      path: "/x",';
  assert.deepEqual(secondHandlerStyle("api/x.ts", good), []);
});

/** The entry's own routes: the document, the health check and the metrics. */
const ENTRY_ROUTES = ["/api/openapi.json", "/api/healthz", "/metrics"];

/**
 * Path patterns outside their area, and where (`file:line`): a route registered, a path
 * matched by a regular expression or a route pattern with parameters, in a file that is no
 * route area (api/<area>.ts, web/<area>.tsx). The entry (app.ts) registers only its own routes;
 * areas.ts mounts the areas from their prefixes (its `ROUTE_AREAS`); what a route needs (a body limit, a
 * raw body, a larger form) is declared on the route.
 */
export function pathsOutsideAreas(file: string, source: string): string[] {
  const found: string[] = [];
  const rules: [RegExp, string][] = [
    [
      /\.(get|post|put|patch|delete|on|all|use)\(\s*(\[[^\]]*\]\s*,\s*)?["'`](\/[^"'`]*)["'`]/,
      "a route",
    ],
    [/\/\^\\\/(?![/\\(\[])/, "a path's regular expression"],
  ];
  if (file !== "areas.ts") {
    rules.push([/["'`]\/[a-z-]+\/[^"'`\s]*\/:[a-z]/i, "a route pattern"]);
  }
  source.split("\n").forEach((line, i) => {
    if (/^\s*(\/\/|\*|\/\*)/.test(line)) return;
    for (const [re, what] of rules) {
      const m = line.match(re);
      if (!m) continue;
      if (what === "a route" && file === "app.ts" && ENTRY_ROUTES.includes(m[3])) continue;
      found.push(`${file}:${i + 1}: ${what}`);
    }
  });
  return found;
}

const isArea = (file: string) =>
  /^api\/[^/]+\.ts$/.test(file) || /^web\/[^_/][^/]*\.tsx?$/.test(file);

Deno.test("layout: path patterns live in their areas (the entry holds only prefixes)", async () => {
  const files = (await sourceFiles()).filter((f) =>
    !isArea(f) && !/^(jobs|cli|bench|web\/static)\//.test(f) && f !== "main.ts"
  );
  const found: string[] = [];
  for (const f of files) {
    found.push(...pathsOutsideAreas(f, await Deno.readTextFile(`${ROOT}${f}`)));
  }
  assert.deepEqual(found, []);
});

Deno.test("layout: the path pattern check finds each kind", () => {
  const cases: [string, string][] = [
    ["app.ts", 'app.on(["GET", "POST"], "/api/hooks/:key", ping);'],
    ["app.ts", 'app.all("/ping/*", compat);'],
    ["app.ts", "const RAW_BODY = [/^\\/api\\/me\\/files$/];"],
    ["web/_web.tsx", "  [/^\\/contribute$/, 512 * 1024],"],
    ["http/x.ts", 'const PING_ROUTES = ["/api/hooks/:key", "/api/hooks/:key/:signal"];'],
  ];
  for (const [file, source] of cases) {
    assert.notDeepEqual(pathsOutsideAreas(file, source), [], source);
  }
  assert.deepEqual(pathsOutsideAreas("app.ts", 'app.get("/api/healthz", healthz(deps));'), []);
  assert.deepEqual(
    pathsOutsideAreas("areas.ts", '  hc: api(["/api/:version/checks/*"], load),'),
    [],
  );
});

/** kv/'s aggregates, one folder each (docs/kv.md, docs/architecture.md "Where to go"). */
const KV_FOLDERS = [
  "accounts",
  "alerts",
  "catalogue",
  "files",
  "forms",
  "parts",
  "search",
  "service",
  "status",
  "store",
];

Deno.test("layout: every kv module lives in its aggregate's folder, with the folder's header", async () => {
  const files = (await sourceFiles()).filter((f) => f.startsWith("kv/"));
  // At kv/'s root only the commit path every module uses (its names start with _).
  const outside = files.filter((f) => {
    const parts = f.split("/");
    if (parts.length === 2) return !parts[1].startsWith("_");
    return parts.length !== 3 || !KV_FOLDERS.includes(parts[1]);
  });
  assert.deepEqual(
    outside,
    [],
    "put the module in one of KV_FOLDERS (or add a folder, with its README.md)",
  );
  for (const folder of KV_FOLDERS) {
    const readme = await Deno.readTextFile(`${ROOT}kv/${folder}/README.md`);
    const modules = files.filter((f) => f.startsWith(`kv/${folder}/`)).map((f) => f.split("/")[2]);
    for (const m of modules) assert.ok(readme.includes(m), `kv/${folder}/README.md names ${m}`);
  }
});

/**
 * The names a module exports as its own: what it declares, and what it exports under a new name.
 * Passing on an imported binding under its own name (`export { x }`, `export { x } from`) is the
 * same binding, not a second name.
 */
function ownExports(text: string): string[] {
  const names = new Set<string>();
  const declared =
    /^export\s+(?:declare\s+)?(?:async\s+)?(?:abstract\s+)?(?:function\*?|const|let|var|class|interface|type|enum)\s+([A-Za-z_$][\w$]*)/gm;
  for (const m of text.matchAll(declared)) names.add(m[1]);
  const imported = new Set<string>();
  for (const m of text.matchAll(/^import\s+(?:type\s+)?(?:[\w$]+\s*,\s*)?\{([^}]*)\}/gm)) {
    for (const part of m[1].split(",")) {
      const local = part.trim().replace(/^type\s+/, "").split(/\s+as\s+/).pop()!.trim();
      if (local) imported.add(local);
    }
  }
  for (const m of text.matchAll(/^export\s+(?:type\s+)?\{([^}]*)\}(\s*from\b)?/gm)) {
    for (const part of m[1].split(",")) {
      const [local, renamed] = part.trim().replace(/^type\s+/, "").split(/\s+as\s+/);
      if (!local) continue;
      if (renamed) names.add(renamed.trim());
      else if (!m[2] && !imported.has(local)) names.add(local);
    }
  }
  return [...names];
}

/**
 * Names two product modules may both export, each with the reason. Empty: a name says what it
 * holds, so two things of one name are one thing too many (import one under another name, or
 * name each for what it is).
 */
const SHARED_EXPORTS: Record<string, string> = {};

Deno.test("layout: no two product modules export the same name", async () => {
  const where = new Map<string, string[]>();
  for (const file of await sourceFiles()) {
    if (!PRODUCT.includes(folder(file)) && !["main.ts", "app.ts", "areas.ts"].includes(file)) {
      continue;
    }
    if (file.endsWith(".d.ts")) continue;
    for (const name of ownExports(code(await Deno.readTextFile(`${ROOT}${file}`)))) {
      where.set(name, [...(where.get(name) ?? []), file]);
    }
  }
  const twice = [...where].filter(([name, files]) => files.length > 1 && !(name in SHARED_EXPORTS))
    .map(([name, files]) => `${name}: ${files.join(", ")}`);
  assert.deepEqual(twice, [], "give each a name that says what it holds");
});

Deno.test("layout: the export scan tells a module's own names from passed-on ones", () => {
  const text = [
    'import { a, type B, c as d } from "./x.ts";',
    "export const one = 1;",
    "export async function two() {}",
    "export interface Three {}",
    "export type Four = string;",
    "const five = 5;",
    "export { a, type B, d, five };",
    'export { six } from "./y.ts";',
    'export { seven as eight } from "./y.ts";',
    "export { a as nine };",
  ].join("\n");
  assert.deepEqual(ownExports(text).sort(), [
    "Four",
    "Three",
    "eight",
    "five",
    "nine",
    "one",
    "two",
  ]);
});

/**
 * The pages whose cells may name their columns themselves, each with the reason. Every other
 * table is web/_table.tsx `Table`, which writes the `data-label` of each cell from its column.
 */
const OWN_CELL_LABELS: Record<string, string> = {
  "web/_watch_board_row.tsx":
    "the watch list is no stacked table: its own layout (site.css .watchlist), " +
    "sortable headings and a label that differs by row (Last runs, Last checks)",
};

/** Where a page writes a cell's `data-label` by hand (`file:line`), comments aside. */
export function handWrittenCellLabels(file: string, source: string): string[] {
  if (file === "web/_table.tsx" || file in OWN_CELL_LABELS) return [];
  const found: string[] = [];
  source.split("\n").forEach((line, i) => {
    if (/^\s*(\/\/|\*|\/\*)/.test(line)) return;
    if (/\bdata-label\s*[=:]|["']data-label["']/.test(line)) found.push(`${file}:${i + 1}`);
  });
  return found;
}

Deno.test("layout: a table's cells are labelled by web/_table.tsx alone", async () => {
  const found: string[] = [];
  for (const f of (await sourceFiles()).filter((f) => f.startsWith("web/"))) {
    found.push(...handWrittenCellLabels(f, await Deno.readTextFile(`${ROOT}${f}`)));
  }
  assert.deepEqual(found, [], "name the columns of a web/_table.tsx Table instead");
});

Deno.test("layout: the cell label check finds a hand-written label", () => {
  for (
    const line of [
      '  <td data-label="Name">{x}</td>',
      "  <td data-label={label}>",
      '  <th scope="row" data-label="Service">',
      '  const attrs = { "data-label": col.label };',
    ]
  ) {
    assert.deepEqual(handWrittenCellLabels("web/x.tsx", line), ["web/x.tsx:1"], line);
  }
  assert.deepEqual(handWrittenCellLabels("web/x.tsx", " * each cell's `data-label`"), []);
  assert.deepEqual(handWrittenCellLabels("web/_table.tsx", '<td data-label="Name">'), []);
});

/**
 * The most lines a module of web/ holds. A page area's module holds its routes and each page
 * lives in a module of its own (web/_*.tsx), so a longer one is pages and parts grown into one:
 * split it by page or by concern rather than raise the limit.
 */
const WEB_MODULE_LINES = 400;

/** A module over the line limit, as `file: lines`, or nothing. */
export function overLongModule(file: string, source: string): string | null {
  const lines = source.split("\n").length - (source.endsWith("\n") ? 1 : 0);
  return lines > WEB_MODULE_LINES ? `${file}: ${lines} lines` : null;
}

Deno.test("layout: no module of web/ is longer than the limit", async () => {
  const found: string[] = [];
  for (const f of (await sourceFiles()).filter((f) => f.startsWith("web/"))) {
    const long = overLongModule(f, await Deno.readTextFile(`${ROOT}${f}`));
    if (long) found.push(long);
  }
  assert.deepEqual(
    found,
    [],
    `split each by page or concern: a module of web/ holds at most ${WEB_MODULE_LINES} lines`,
  );
});

Deno.test("layout: the line limit check finds a long module", () => {
  const at = (n: number) => "x\n".repeat(n);
  assert.equal(overLongModule("web/x.tsx", at(401)), "web/x.tsx: 401 lines");
  assert.equal(overLongModule("web/x.tsx", at(400)), null);
  assert.equal(overLongModule("web/x.tsx", at(400) + "x"), "web/x.tsx: 401 lines");
});

/**
 * Lines of product code that send the reader to SPEC.md or CONTRACT.md, files that are not in
 * the repository: a comment names the section of docs/ (or the README) that states the rule.
 */
export function outsideCitations(file: string, source: string): string[] {
  return source.split("\n").flatMap((line, i) =>
    /\b(SPEC|CONTRACT)\.md\b/.test(line) ? [`${file}:${i + 1}`] : []
  );
}

Deno.test("layout: product code cites the repository's docs, not SPEC.md or CONTRACT.md", async () => {
  const found: string[] = [];
  for (const f of await sourceFiles()) {
    found.push(...outsideCitations(f, await Deno.readTextFile(`${ROOT}${f}`)));
  }
  assert.deepEqual(found, [], "name the section of docs/ that states the rule instead");
});

Deno.test("layout: the citation check finds SPEC.md and CONTRACT.md", () => {
  assert.deepEqual(outsideCitations("lib/x.ts", "a\n// the rule of CONTRACT.md\n"), ["lib/x.ts:2"]);
  assert.deepEqual(outsideCitations("lib/x.ts", " * SPEC.md section 4"), ["lib/x.ts:1"]);
  assert.deepEqual(outsideCitations("lib/x.ts", ' * docs/api.md, "Mail"'), []);
});
