/**
 * What tests/_browser.ts `assertAccessible` relies on to check a page's dark scheme for its
 * colours only: the scheme changes nothing but colours. Its one block in web/static/site.css sets
 * custom properties of `:root`, and no other file of the pages names the scheme.
 */
import assert from "node:assert/strict";
import { ROOT } from "./_server.ts";

/** The body of every `@media` rule whose condition names `feature`, braces balanced. */
function mediaBlocks(css: string, feature: string): string[] {
  const out: string[] = [];
  for (const m of css.matchAll(/@media[^{]*\{/g)) {
    if (!m[0].includes(feature)) continue;
    let depth = 1;
    let i = m.index + m[0].length;
    const start = i;
    for (; depth > 0 && i < css.length; i++) {
      if (css[i] === "{") depth++;
      else if (css[i] === "}") depth--;
    }
    out.push(css.slice(start, i - 1));
  }
  return out;
}

Deno.test("site.css: the dark scheme sets colours of :root and nothing else", async () => {
  const css = await Deno.readTextFile(`${ROOT}web/static/site.css`);
  const blocks = mediaBlocks(css, "prefers-color-scheme");
  assert.equal(blocks.length, 1);
  const rule = blocks[0].trim().match(/^:root\s*\{([^}]*)\}$/);
  assert.ok(rule, `the dark block holds one :root rule: ${blocks[0].slice(0, 80)}`);
  const declarations = rule[1].split(";").map((d) => d.trim()).filter(Boolean);
  assert.ok(declarations.length > 10);
  for (const d of declarations) {
    assert.match(d, /^--[a-z-]+:\s*#[0-9a-f]{6}$/, `not a colour of its own: ${d}`);
  }
});

Deno.test("site.css: no other file of the pages names the colour scheme", async () => {
  const named: string[] = [];
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(`${ROOT}${dir}`)) {
      const path = `${dir}/${e.name}`;
      if (e.isDirectory) await walk(path);
      else if (/\.(tsx?|js|css)$/.test(e.name) && path !== "web/static/site.css") {
        if ((await Deno.readTextFile(`${ROOT}${path}`)).includes("prefers-color-scheme")) {
          named.push(path);
        }
      }
    }
  };
  await walk("web");
  assert.deepEqual(named, []);
});

Deno.test("site.css: mediaBlocks finds a nested block whole", () => {
  const css = "a{}@media (prefers-color-scheme: dark) { :root { --x: #000000; } }b{}";
  assert.deepEqual(mediaBlocks(css, "prefers-color-scheme"), [" :root { --x: #000000; } "]);
  assert.deepEqual(mediaBlocks(css, "max-width"), []);
});
