import assert from "node:assert/strict";
import { ROOT } from "./_server.ts";

/**
 * The layout rules of docs/architecture.md, checked on the real import graph (`deno info
 * --json` over every module of every entry point: main.ts, app.ts, routes.ts and each file of
 * http/, api/, kv/, lib/, mail/, web/, jobs/, cli/, bench/) and on the sources' KV key literals
 * against the owners listed in docs/kv.md.
 */

const FOLDERS = ["http", "api", "kv", "lib", "mail", "web", "jobs", "cli", "bench"];
const SOURCE = /\.tsx?$/;

async function sourceFiles(): Promise<string[]> {
  const out = ["main.ts", "app.ts", "routes.ts"];
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
 * the entry's (routes.ts).
 */
const FORBIDDEN: Record<string, string[]> = {
  lib: ["kv", "http", "api", "web", "mail", "jobs", "cli", "bench"],
  mail: ["kv", "http", "api", "web", "jobs", "cli", "bench"],
  kv: ["http", "api", "web", "jobs", "cli", "bench"],
  http: ["api", "web", "jobs", "cli", "bench"],
  api: ["web", "jobs", "cli", "bench"],
  web: ["api", "jobs", "cli", "bench"],
};

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
const RAW_WRITERS = ["kv/_atomic.ts", "kv/_locked.ts", "kv/trail.ts"];
const PRODUCT = ["http", "api", "web", "kv", "lib", "mail", "jobs", "cli"];

Deno.test("layout: every write goes through the commit path, which no import changes", async () => {
  const bad: string[] = [];
  for (const file of await sourceFiles()) {
    if (!PRODUCT.includes(folder(file)) && !["main.ts", "app.ts", "routes.ts"].includes(file)) {
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
  assert.match(atomic, /authWriteBegins\(/);
  assert.match(atomic, /kickTrail\(/);
  const { edges } = await graph;
  assert.ok(edges.some((e) => e.from === "kv/_atomic.ts" && e.to === "kv/_auth_cache.ts"));
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

/** Key builders each kv/ module exports: `export const xKey = (...) => ["prefix", ...]`. */
const BUILDER = /export const (\w+) = \([^)]*\)(?:: [^=]+)? =>\s*\[\s*"[a-z][a-z0-9_]*"/g;

Deno.test("layout: one writer per key prefix: another module's key builder never writes", async () => {
  const files = await sourceFiles();
  const builders = new Map<string, string>();
  for (const file of files.filter((f) => folder(f) === "kv")) {
    const text = code(await Deno.readTextFile(`${ROOT}${file}`));
    for (const m of text.matchAll(BUILDER)) builders.set(m[1], file);
  }
  assert.ok(builders.has("accountKey") && builders.has("dueKey") && builders.has("hookKey"));
  const bad: string[] = [];
  for (const file of files) {
    if (EXEMPT_FOLDERS.includes(folder(file))) continue;
    const text = code(await Deno.readTextFile(`${ROOT}${file}`));
    // A builder this file imports from the module that defines it, used as a written key.
    for (const imp of text.matchAll(/import \{([^}]*)\} from "([^"]+)"/g)) {
      const from = new URL(imp[2], `file:///${file}`).pathname.slice(1);
      for (const name of imp[1].split(",").map((n) => n.trim().replace(/^type /, ""))) {
        if (builders.get(name) !== from) continue;
        const write = new RegExp(`\\.(?:set|delete|sum|min|max)\\(\\s*${name}\\(`, "g");
        for (const m of text.matchAll(write)) {
          const line = text.slice(0, m.index).split("\n").length;
          bad.push(`${file}:${line} writes ${name} of ${from}: use its mutators`);
        }
      }
    }
  }
  assert.deepEqual(bad, []);
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
