/**
 * What a fresh machine downloads and what `deno compile` packs: deno.lock holds only the
 * server's packages (`deno task` installs all of deno.json and deno.lock before any task), the
 * test and benchmark packages stay in deno.dev.lock, every lazily loaded module is one
 * `deno compile` can see, and the README shows the commands the tasks run.
 */
import assert from "node:assert/strict";
import { ROOT } from "./_server.ts";

const read = (p: string) => Deno.readTextFile(`${ROOT}${p}`);
const config = JSON.parse(await read("deno.json"));

/** Package names in a lockfile's npm section (`name@version` keys). */
async function lockPackages(file: string): Promise<Map<string, string>> {
  const lock = JSON.parse(await read(file));
  return new Map(
    Object.entries(lock.npm ?? {}).map(([k, v]) => [k, (v as { integrity: string }).integrity]),
  );
}
const nameOf = (key: string) => key.replace(/^(@?[^@]+)@.*$/, "$1");

Deno.test("deps: the first start downloads only the server's packages", async () => {
  const dev = [...(await read("tests/_dev_deps.ts")).matchAll(/"npm:(@?[^@"]+)@/g)].map((m) =>
    m[1]
  );
  assert.deepEqual(dev.sort(), [
    "@redocly/openapi-core",
    "@sparticuz/chromium",
    "@xmldom/xmldom",
    "autocannon",
    "axe-core",
    "jsonld",
    "oidc-provider",
    "puppeteer-core",
    "smtp-server",
  ]);
  const server = await lockPackages("deno.lock");
  for (const name of dev) {
    assert.ok(!(name in config.imports), `${name} must not be in deno.json's imports`);
    assert.ok(![...server.keys()].some((k) => nameOf(k) === name), `${name} is in deno.lock`);
  }
  // Tests run the very versions the server runs.
  const all = await lockPackages("deno.dev.lock");
  for (const [k, integrity] of server) assert.equal(all.get(k), integrity, `${k} in deno.dev.lock`);
  for (const name of ["autocannon", "smtp-server"]) {
    assert.ok([...all.keys()].some((k) => nameOf(k) === name), `${name} in deno.dev.lock`);
  }
  // Tasks that load test or bench code use the dev lock, the others the server's.
  for (const [name, cmd] of Object.entries(config.tasks as Record<string, string>)) {
    const devTask = /(^|\s)(tests|bench)\//.test(cmd);
    assert.equal(cmd.includes("--lock=deno.dev.lock"), devTask, `task ${name}: ${cmd}`);
  }
});

/** Every source file the server or its commands load (not tests, benchmarks or data). */
async function sources(): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(`${ROOT}${dir}`)) {
      const p = dir ? `${dir}/${e.name}` : e.name;
      if (e.isDirectory) {
        if (!["tests", "bench", "data", "dist", "node_modules", ".git"].includes(p)) await walk(p);
      } else if (/\.(ts|tsx)$/.test(e.name)) out.push(p);
    }
  };
  await walk("");
  return out;
}

Deno.test("deps: every dynamic import is a string literal deno compile can follow", async () => {
  const files = await sources();
  assert.ok(files.includes("app.ts") && files.includes("jobs/mod.ts"));
  let found = 0;
  for (const f of files) {
    // Comments may say "import (…)"; blanked, line breaks kept for the line numbers.
    const text = (await read(f)).replace(/\/\*[^]*?\*\//g, (c) => c.replace(/[^\n]/g, " "))
      .replace(/(^|[^:"'`])\/\/.*$/gm, "$1");
    for (const m of text.matchAll(/\bimport\s*\(\s*([^\s])/g)) {
      found++;
      const line = text.slice(0, m.index).split("\n").length;
      assert.match(m[1], /["']/, `${f}:${line}: import() of a computed specifier`);
    }
  }
  assert.ok(found >= 20, `found ${found} dynamic imports`);
});

Deno.test("deps: the README shows the compile command, the dependency step and a hardened unit", async () => {
  const readme = await read("README.md");
  assert.ok(readme.includes(config.tasks.compile), `README lacks: ${config.tasks.compile}`);
  // The systemd setup fetches the dependencies before the first start.
  assert.match(readme, /deno task deps/);
  assert.equal(config.tasks.deps, "deno install --entrypoint main.ts");
  const unit = readme.match(/```ini\n([^]*?)```/)![1];
  for (
    const line of [
      "[Unit]",
      "After=network-online.target",
      "Wants=network-online.target",
      "User=catalogue",
      "NoNewPrivileges=true",
      "ProtectSystem=strict",
      "PrivateTmp=true",
      "ReadWritePaths=/srv/catalogue/data",
    ]
  ) assert.ok(unit.includes(line), `the unit lacks ${line}`);
  assert.match(
    config.tasks.compile,
    /^deno compile --v8-flags=\S+( --allow-\w+)+ --include web\/static --output dist\/catalogue main\.ts$/,
  );
  // The binary runs with the start task's V8 settings (docs/operations.md, "Memory").
  const v8 = (cmd: string) => cmd.match(/--v8-flags=\S+/)?.[0];
  assert.equal(v8(config.tasks.compile), v8(config.tasks.start));
  // The binary gets the permissions the start task runs with, no more.
  const perms = (cmd: string) => cmd.match(/--allow-\w+/g)!.sort();
  assert.deepEqual(perms(config.tasks.compile), perms(config.tasks.start));
});

Deno.test("deps: no package of either lock runs install scripts, so no task prints the box", async () => {
  // Deno skips npm install scripts without a node_modules folder and says so in a boxed
  // warning on every fresh machine; a package denied in deno.json's allowScripts is skipped
  // quietly. The lock files say which packages have such scripts (`scripts: true`).
  const denied = new Set<string>(config.allowScripts?.deny ?? []);
  for (const file of ["deno.lock", "deno.dev.lock"]) {
    const lock = JSON.parse(await read(file));
    for (const [key, entry] of Object.entries(lock.npm ?? {})) {
      if (!(entry as { scripts?: boolean }).scripts) continue;
      assert.ok(denied.has(`npm:${nameOf(key)}`), `${file}: ${key} has install scripts`);
    }
  }
  assert.deepEqual([...denied], ["npm:@scarf/scarf"]);
});
