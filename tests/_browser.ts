/**
 * Browser tests: headless Chromium (from the npm package @sparticuz/chromium, so a fresh
 * machine needs nothing else) driven by puppeteer-core through the real server process
 * (tests/_real_server.ts), which mails through a local SMTP sink (tests/_smtp.ts). Pages are
 * used as a person would: links, buttons and fields are found by their visible text and
 * labels; axe-core checks each page for serious or critical accessibility problems.
 *
 * One server per test file, and one browser: the run's own under `deno task test`
 * (tests/_with_chromium.ts), each file in browser contexts of its own; else the file's
 * (starting either costs seconds):
 *
 *   Deno.test({ name: "...", ...BROWSER_TEST, fn: async (t) => {
 *     await using web = await startWeb();
 *     const page = await web.page();
 *     await web.signIn(page, "ann@example.com");
 *     await t.step("...", async () => { ... });
 *   }});
 */
import assert from "node:assert/strict";
import {
  axe,
  type Browser,
  type BrowserContext,
  type CDPSession,
  chromium,
  type ElementHandle,
  type Page,
  puppeteer,
} from "./_dev_deps.ts";
import { type RealServer, startFreshServer } from "./_real_server.ts";
import { type Sink, smtpSink } from "./_smtp.ts";

export type { Page };

/**
 * Functions below marked "in the page" run in the browser (puppeteer serialises them). The
 * type check here has no DOM types (Deno's own would clash with them): they see it untyped.
 */
// deno-lint-ignore no-explicit-any
type Dom = any;

/** Browser tests share one browser across steps: the step sanitizers would see its handles. */
export const BROWSER_TEST = { sanitizeOps: false, sanitizeResources: false } as const;

/** Arguments of the package that would make the browser laxer than a person's (no CORS). */
const LAX = new Set([
  "--disable-web-security",
  "--allow-running-insecure-content",
  // One process for everything cannot open a second browser context (a second cookie jar).
  "--single-process",
]);

/**
 * The package's software GL (SwiftShader behind ANGLE, in the browser process) drew every
 * frame of every open tab in the browser process, much of its CPU in these tests. Plain
 * software compositing draws the same pages (layout, styles and colours are the renderer's)
 * for less (docs/performance.md, "The test suite").
 */
const SOFTWARE_GL = new Set([
  "--use-gl",
  "--use-angle",
  "--enable-unsafe-swiftshader",
  "--in-process-gpu",
  "--ignore-gpu-blocklist",
]);

/**
 * A new document in a tab got a new frame host in the browser process ("RenderDocument"), which
 * made each navigation dearer in Chromium (docs/performance.md, "The test suite"); how the page
 * is loaded, laid out and run does not change without it.
 */
const ONE_FRAME_HOST = "--disable-features=RenderDocument";

/**
 * The package starts every renderer as a new program (for AWS Lambda, which cannot fork one);
 * forked from Chromium's zygote, a new browser context's first page costs much less CPU
 * (docs/performance.md, "The test suite").
 */
const NO_ZYGOTE = "--no-zygote";

/**
 * Pages here live for a few seconds, and axe (a large script) is loaded anew in each checked
 * document: V8's optimising compilers (Maglev, TurboFan) compiled it again every time, on
 * threads of their own, for runs too short to gain from it. The interpreter and the baseline
 * compiler run the same code for less CPU (docs/performance.md, "The test suite").
 */
const SHORT_LIVED_JS = "--js-flags=--no-opt --no-maglev";

const VIEWPORT = { width: 1280, height: 900 };

export async function launchBrowser(): Promise<Browser> {
  const args = chromium.args.filter((a) =>
    !LAX.has(a) && !SOFTWARE_GL.has(a.split("=")[0]) && a !== NO_ZYGOTE
  );
  return await puppeteer.launch({
    executablePath: await chromium.executablePath(),
    args: [...args, "--disable-gpu", ONE_FRAME_HOST, SHORT_LIVED_JS],
    headless: true,
    defaultViewport: VIEWPORT,
  });
}

/**
 * Where tests/_with_chromium.ts's browser listens, when the test files run under it (`deno task
 * test`): they share it, each in browser contexts of its own, instead of starting one each
 * (a launch costs CPU and seconds for every file: docs/performance.md, "The test suite").
 */
export const SHARED_BROWSER = "BROWSER_WS";

/** The browser of one test file: the shared one if there is one, else its own. */
interface FileBrowser {
  /** A new browser context (cookie jar), closed with the rest when the file is done. */
  context(): Promise<BrowserContext>;
  close(): Promise<void>;
}

async function fileBrowser(): Promise<FileBrowser> {
  const endpoint = Deno.env.get(SHARED_BROWSER);
  if (!endpoint) {
    const browser = await launchBrowser();
    return { context: () => browser.createBrowserContext(), close: () => browser.close() };
  }
  // Only this file's contexts: the other files' pages are not this connection's business.
  const ours = new Set<BrowserContext>();
  const browser = await puppeteer.connect({
    browserWSEndpoint: endpoint,
    defaultViewport: VIEWPORT,
    targetFilter: (target) => {
      if (target.type() === "browser") return true;
      try {
        return ours.has(target.browserContext());
      } catch {
        return false;
      }
    },
  });
  return {
    async context() {
      const context = await browser.createBrowserContext();
      ours.add(context);
      return context;
    },
    async close() {
      for (const context of ours) await context.close().catch(() => {});
      await browser.disconnect();
    },
  };
}

export interface Web extends AsyncDisposable {
  server: RealServer;
  sink: Sink;
  base: string;
  /** A new page (tab) with its own cookie jar, recording console errors and CSP reports. */
  page(): Promise<Page>;
  /**
   * Signs `page` in from the mailed link, as a person would (`name` for a new account); ends on
   * the account page.
   */
  signIn(page: Page, email: string, name?: string): Promise<void>;
  /**
   * On a sign-in form: asks for a link to `email` (with `name` for a new account) and returns
   * the mailed link at this server's address (the mail links to BASE_URL).
   */
  requestLink(page: Page, email: string, name?: string): Promise<string>;
  /** Loads the example catalogue and its accounts (`deno task demo`) into the server's KV. */
  demo(): Promise<void>;
  /** The link in the n-th mail (from 1) to an address that contains `contains`. */
  mailedLink(to: string, contains: string, n?: number): Promise<string>;
}

/** The real server (mailing to a local sink) and a browser; both go when disposed. */
export async function startWeb(env: Record<string, string> = {}): Promise<Web> {
  const sink = await smtpSink();
  let server: RealServer;
  try {
    server = await startFreshServer({ SMTP_URL: sink.url, ...env });
  } catch (err) {
    await sink[Symbol.asyncDispose]();
    throw err;
  }
  let files: FileBrowser;
  try {
    files = await fileBrowser();
  } catch (err) {
    await server[Symbol.asyncDispose]();
    await sink[Symbol.asyncDispose]();
    throw err;
  }
  const base = server.base;
  const web: Web = {
    server,
    sink,
    base,
    async page() {
      const context = await files.context();
      const page = await context.newPage();
      await watch(page);
      return page;
    },
    async demo() {
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", "--lock=deno.dev.lock", "cli/demo.ts"],
        cwd: new URL("..", import.meta.url).pathname,
        env: { KV_PATH: server.kvPath, BASE_URL: base },
        stdout: "piped",
        stderr: "piped",
      }).output();
      if (!out.success) throw new Error(`demo failed: ${new TextDecoder().decode(out.stderr)}`);
    },
    async mailedLink(to, contains, n = 1) {
      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline) {
        const got = sink.mails.filter((m) => m.to === to && m.text.includes(contains));
        if (got.length >= n) {
          const url = got[n - 1].text.split(/\s+/).find((w) => w.includes(contains));
          if (url) return url;
        }
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error(`no mail #${n} to ${to} with ${contains}`);
    },
    async requestLink(page, email, name) {
      // Counted as mailedLink counts: only the mails with a link (not the new-device notices).
      const before = sink.mails.filter((m) => m.to === email && m.text.includes("/me?verify="))
        .length;
      await fillByLabel(page, "E-mail address", email);
      if (name !== undefined) await fillByLabel(page, "Your name (new accounts)", name);
      await checkByLabel(page, "I am old enough to have an account here");
      await clickByText(page, "Mail me a sign-in link");
      assert.equal(await heading(page), "Check your mail");
      const url = new URL(await web.mailedLink(email, "/me?verify=", before + 1));
      // The mail links to BASE_URL; the server under test listens on its own port.
      return `${base}${url.pathname}${url.search}`;
    },
    async signIn(page, email, name) {
      await page.goto(`${base}/sign-in`);
      await page.goto(await web.requestLink(page, email, name));
      await clickByText(page, "Sign in on this device");
      assert.equal(new URL(page.url()).pathname, "/me");
    },
    async [Symbol.asyncDispose]() {
      await files.close().catch(() => {});
      await server[Symbol.asyncDispose]();
      await sink[Symbol.asyncDispose]();
    },
  };
  return web;
}

// ---- what a page did wrong ----------------------------------------------------------------

const problems = new WeakMap<Page, string[]>();

async function watch(page: Page) {
  const list: string[] = [];
  problems.set(page, list);
  page.on("console", (m) => {
    if (m.type() !== "error") return;
    // A page answered with an error status (a 404 page, a form shown again with 400) is
    // reported so by the browser; that is the page itself, not a problem of it.
    const own = m.location()?.url === page.url() && /status of [45]\d\d/.test(m.text());
    if (!own) list.push(`console: ${m.text()}`);
  });
  page.on("pageerror", (e) => list.push(`page error: ${(e as Error).message ?? e}`));
  // Injected by the browser's debugging protocol, which the page's CSP does not govern.
  await page.evaluateOnNewDocument(() => {
    const document: Dom = (globalThis as Dom).document;
    document.addEventListener("securitypolicyviolation", (e: Dom) => {
      console.error(`CSP: ${e.violatedDirective} blocked ${e.blockedURI || "inline"}`);
    });
  });
}

/** Console errors, uncaught errors and CSP violations seen on the page so far. */
export function pageProblems(page: Page): string[] {
  return [...(problems.get(page) ?? [])];
}

/** Takes the problems matching `expected` off the page's list (a refusal a step asked for). */
export function expectProblems(page: Page, expected: RegExp): string[] {
  // In place: the page's listeners keep adding to this very list.
  const list = problems.get(page) ?? [];
  const taken = list.filter((p) => expected.test(p));
  const kept = list.filter((p) => !expected.test(p));
  list.splice(0, list.length, ...kept);
  return taken;
}

/** Fails when the page logged errors or broke its CSP (then forgets them). */
export function assertNoProblems(page: Page): void {
  const list = problems.get(page) ?? [];
  const found = list.splice(0);
  assert.deepEqual(found, [], `problems on ${page.url()}`);
}

// ---- finding things as a person does ------------------------------------------------------
//
// Each helper asks the page once (one `page.evaluate`) and acts with the mouse and keyboard as a
// person would. Puppeteer's element handles and selector queries cost several protocol round
// trips each (a handle moved between worlds, a point found by quads, a scroll checked by an
// observer): much of what Chromium spent outside page loads and axe (docs/performance.md, "The
// test suite").

const norm = (s: string) => s.replace(/\s+/g, " ").trim();

/** A point to click on: in the viewport, within the element's first box. */
interface Point {
  x: number;
  y: number;
}

/**
 * Where the first visible link or button whose text (or accessible label) is exactly `text` is,
 * scrolled into view if it is not (`scroll`); fails naming the page's links and buttons.
 */
async function pointOf(page: Page, text: string, scroll: boolean): Promise<Point> {
  const at = await page.evaluate(
    (wanted: string, scroll: boolean): Point | null => {
      const g: Dom = globalThis;
      const norm = (s: string) => s.replace(/\s+/g, " ").trim();
      const candidates: Dom[] = g.document.querySelectorAll(
        "a[href], button, input[type=submit], input[type=button], [role=button], summary",
      );
      for (const el of candidates) {
        const text = el.tagName === "INPUT" ? el.value : el.innerText;
        const label = el.getAttribute("aria-label");
        const visible = el.offsetParent !== null || el.getClientRects().length > 0;
        if (!visible || (norm(text ?? "") !== wanted && norm(label ?? "") !== wanted)) continue;
        const box = () => [...el.getClientRects()].find((r: Dom) => r.width > 0 && r.height > 0);
        const r = box();
        const outside = !r || r.top < 0 || r.left < 0 || r.bottom > g.innerHeight ||
          r.right > g.innerWidth;
        if (scroll && outside) el.scrollIntoView({ block: "center", inline: "center" });
        const b = box() ?? el.getBoundingClientRect();
        return { x: b.left + b.width / 2, y: b.top + b.height / 2 };
      }
      return null;
    },
    norm(text),
    scroll,
  );
  if (at) return at;
  const seen = await page.evaluate(() =>
    [...(globalThis as Dom).document.querySelectorAll("a[href], button")]
      .map((e: Dom) => e.innerText.trim() as string).filter(Boolean)
  );
  throw new Error(`no link or button "${text}" on ${page.url()}; there are: ${seen.join(" | ")}`);
}

/** Fails unless a visible link or button whose text (or accessible label) is `text` is shown. */
export async function byText(page: Page, text: string): Promise<void> {
  await pointOf(page, text, false);
}

/**
 * Clicks the link or button with this text (found as byText finds it) where a person would: in
 * the middle of its first box, scrolled into view if it is not. By default waits for the page it
 * leads to (links, form buttons); `{navigates: false}` for buttons that act in place.
 */
export async function clickByText(
  page: Page,
  text: string,
  opts: { navigates?: boolean } = {},
): Promise<void> {
  const at = await pointOf(page, text, true);
  if (opts.navigates === false) return await page.mouse.click(at.x, at.y);
  await Promise.all([page.waitForNavigation({ waitUntil: "load" }), page.mouse.click(at.x, at.y)]);
}

/** What a helper does to the form control labelled so, in the page (`onControl`). */
type ControlAction =
  | { do: "clear" }
  | { do: "point"; checked: boolean }
  | { do: "select"; option: string }
  | { do: "error" }
  | { do: "id" };

/** What the page answered: the action's result, or why there was none. */
type ControlAnswer =
  | { result: string | Point | null }
  | { labels: string[] }
  | { noOption: true };

/**
 * Finds the form control labelled exactly `label` (by its <label>, or the aria-label of a field)
 * and does `action` to it, in the page:
 * - "clear" empties and focuses it, for typing;
 * - "point" answers where to click to make a checkbox `checked` (null when it already is);
 * - "select" picks the option with this visible text, with the events a person's choice fires;
 * - "error" answers the message beside it (an element of class "error" it is described by);
 * - "id" answers its id, giving it one if it has none.
 */
async function onControl(page: Page, label: string, action: ControlAction) {
  const answer = await page.evaluate(
    (wanted: string, action: ControlAction): ControlAnswer => {
      const g: Dom = globalThis;
      const document: Dom = g.document;
      const norm = (s: string) => s.replace(/\s+/g, " ").trim();
      const labels: Dom[] = [...document.querySelectorAll("label")];
      let c: Dom = labels.find((l) => norm(l.innerText) === wanted && l.control)?.control;
      c ??= [...document.querySelectorAll("[aria-label]")].find((e: Dom) =>
        e.id && norm(e.getAttribute("aria-label") ?? "") === wanted
      );
      if (!c) return { labels: labels.map((l) => l.innerText.trim()) };
      switch (action.do) {
        case "clear":
          c.value = "";
          c.focus();
          return { result: null };
        case "point": {
          if (c.checked === action.checked) return { result: null };
          c.scrollIntoView({ block: "center", inline: "center" });
          const b = c.getBoundingClientRect();
          return { result: { x: b.left + b.width / 2, y: b.top + b.height / 2 } };
        }
        case "select": {
          const o = [...c.options].find((o: Dom) => o.text.trim() === action.option);
          if (!o) return { noOption: true };
          for (const each of c.options) each.selected = each === o;
          c.dispatchEvent(new g.Event("input", { bubbles: true }));
          c.dispatchEvent(new g.Event("change", { bubbles: true }));
          return { result: null };
        }
        case "error": {
          const ids: string[] = (c.getAttribute("aria-describedby") ?? "").split(/\s+/);
          const err = ids.map((i) => document.getElementById(i)).find((e: Dom) =>
            e?.classList.contains("error")
          );
          return { result: err ? (err.innerText.trim() as string) : "" };
        }
        case "id":
          if (!c.id) c.id = `control-${Math.random().toString(36).slice(2)}`;
          return { result: c.id as string };
      }
    },
    norm(label),
    action,
  );
  if ("labels" in answer) {
    throw new Error(
      `no field labelled "${label}" on ${page.url()}; labels: ${answer.labels.join(" | ")}`,
    );
  }
  if ("noOption" in answer) {
    throw new Error(`no option "${(action as { option: string }).option}" in "${label}"`);
  }
  return answer.result;
}

/**
 * Enters `value` in the field labelled `label`, replacing what it held: focused, then the text
 * put in as a paste or an input method does (one `input` event; the field's own limits apply).
 * Key by key cost a protocol round trip and a renderer task per key, and no page here listens to
 * the keys of a form field.
 */
export async function fillByLabel(page: Page, label: string, value: string): Promise<void> {
  await onControl(page, label, { do: "clear" });
  if (value) await page.keyboard.sendCharacter(value);
}

/** Ticks (or clears) the checkbox labelled `label`, with a click on it. */
export async function checkByLabel(page: Page, label: string, on = true): Promise<void> {
  const at = await onControl(page, label, { do: "point", checked: on }) as Point | null;
  if (at) await page.mouse.click(at.x, at.y);
}

/** Picks the option with this visible text in the select labelled `label`. */
export async function selectByLabel(page: Page, label: string, option: string): Promise<void> {
  await onControl(page, label, { do: "select", option });
}

/** Chooses a file for the file field labelled `label`. */
export async function uploadByLabel(page: Page, label: string, path: string): Promise<void> {
  const id = await onControl(page, label, { do: "id" }) as string;
  const el = await page.$(`[id=${JSON.stringify(id)}]`);
  // deno-lint-ignore no-explicit-any
  await (el as ElementHandle<any>).uploadFile(path);
}

/** The text of the first element matching `selector`; fails when there is none. */
async function textOf(page: Page, selector: string, trim: boolean): Promise<string> {
  const text = await page.evaluate((selector: string) => {
    const el: Dom = (globalThis as Dom).document.querySelector(selector);
    return el ? (el.innerText as string) : null;
  }, selector);
  if (text === null) throw new Error(`no ${selector} on ${page.url()}`);
  return trim ? text.trim() : text;
}

/** The page's first heading. */
export async function heading(page: Page): Promise<string> {
  return await textOf(page, "h1", true);
}

/** The current value of the input or text area `selector` names. */
export async function inputValue(page: Page, selector: string): Promise<string> {
  return await page.$eval(selector, (el: { value: string }) => el.value as string);
}

/** The visible text of the main content. */
export async function mainText(page: Page): Promise<string> {
  return await textOf(page, "main", false);
}

/** The message shown beside the field labelled `label` (empty when none). */
export async function fieldError(page: Page, label: string): Promise<string> {
  return await onControl(page, label, { do: "error" }) as string;
}

// ---- checks every page should pass ---------------------------------------------------------

/**
 * axe-core on the page as it is: fails on any serious or critical violation. What axe already
 * found clean on this page for the same address, width and markup is not checked again:
 *
 * - the structure (every rule but the colour rules) once per width: it does not depend on the
 *   colour scheme, whose block in web/static/site.css only sets colours (tests/site_css_test.ts);
 * - the colour rules once per width and scheme (the narrow layout sets colours of its own).
 *
 * So a page checked light and then dark runs only the colour rules in the dark; openUrl and then
 * assertGoodAtBoth on the same page check it once at each width.
 */
export async function assertAccessible(page: Page): Promise<void> {
  const state = await page.evaluate(() => {
    const g: Dom = globalThis;
    const html: string = g.document.documentElement.outerHTML;
    let hash = 0;
    for (let i = 0; i < html.length; i++) hash = (hash * 31 + html.charCodeAt(i)) | 0;
    const dark = g.matchMedia("(prefers-color-scheme: dark)").matches;
    return { markup: [g.location.href, g.innerWidth, html.length, hash].join(" "), dark };
  });
  const checks = cleanStates.get(page) ?? new Map<string, Set<string>>();
  cleanStates.set(page, checks);
  const done = checks.get(state.markup) ?? new Set<string>();
  const colours = state.dark ? "colours dark" : "colours light";
  const needed = ["structure", colours].filter((part) => !done.has(part));
  if (!needed.length) return;
  // Off: the mild rules always, the colour rules when only the structure is due, every other
  // rule when only the colours are (axe's `runOnly` would also turn on rules off by default).
  const structure = needed.includes("structure");
  const off = axeRules.filter((id) =>
    MILD_RULES.includes(id) ||
    (COLOUR_RULES.includes(id) ? !needed.includes(colours) : !structure)
  );
  const found = await runAxe(page, off);
  const bad = found.filter((v) => v.impact === "serious" || v.impact === "critical");
  assert.deepEqual(bad, [], `accessibility problems on ${page.url()}`);
  for (const part of needed) done.add(part);
  checks.set(state.markup, done);
}

/** The rules whose findings depend on the colours: all the colour scheme can change. */
const COLOUR_RULES = ["color-contrast", "link-in-text-block"];

interface Violation {
  id: string;
  impact: string;
  help: string;
  /** The markup of up to three of the elements it found. */
  nodes: string[];
}

/**
 * axe's rules that can find only moderate or minor problems, by axe's own metadata (the rule's
 * impact and each of its checks'). assertAccessible fails on serious and critical ones only, so
 * running these would only cost time.
 */
const MILD_RULES: readonly string[] = (() => {
  const rank: Record<string, number> = { minor: 1, moderate: 2, serious: 3, critical: 4 };
  const audit: Dom = axe._audit;
  if (!audit?.rules?.length) throw new Error("axe-core no longer exposes its rules' metadata");
  // Anything unknown counts as critical, so a rule is left out only when all of it says mild.
  const worst = (impact: string | undefined) => rank[impact ?? ""] ?? 4;
  return audit.rules
    .filter((rule: Dom) =>
      [
        rule,
        ...[...rule.any, ...rule.all, ...rule.none].map((c: Dom) =>
          audit.data.checks[typeof c === "string" ? c : c.id]
        ),
      ].every((meta: Dom) => worst(meta?.impact) < 3)
    )
    .map((rule: Dom) => rule.id as string);
})();

/** Every rule axe has. */
const axeRules: readonly string[] = axe.getRules().map((r: Dom) => r.ruleId as string);

/** Where a page's copy of axe is kept between its documents (its origin's local storage). */
const AXE_KEY = `axe-core ${axe.version}`;

/**
 * Runs axe, the rules `off` turned off, in a world of its own on the page (the DevTools
 * protocol's isolated world: the same document, none of the page's scripts, and not bound by the
 * page's CSP). axe's source is large: sent over the protocol for every document, it cost more than
 * the check (docs/performance.md, "The test suite"). It is sent once per page and origin, kept in
 * local storage, and read from there into each new document.
 */
async function runAxe(page: Page, off: readonly string[]): Promise<Violation[]> {
  let session = axeSessions.get(page);
  if (!session) {
    session = await page.createCDPSession();
    axeSessions.set(page, session);
  }
  const { frameTree } = await session.send("Page.getFrameTree");
  const { executionContextId } = await session.send("Page.createIsolatedWorld", {
    frameId: frameTree.frame.id,
    worldName: "axe",
  });
  const check = async (source: string | null) => {
    const { result, exceptionDetails } = await session.send("Runtime.callFunctionOn", {
      executionContextId,
      functionDeclaration: AXE_IN_PAGE,
      arguments: [{ value: AXE_KEY }, { value: source }, { value: off }],
      awaitPromise: true,
      returnByValue: true,
    });
    if (exceptionDetails) {
      throw new Error(`axe failed on ${page.url()}: ${exceptionDetails.exception?.description}`);
    }
    return result.value as Violation[] | null;
  };
  return await check(null) ?? (await check(axe.source))!;
}

/** In the page's axe world: loads axe (null when it has to be sent) and runs it. */
const AXE_IN_PAGE = String(async (key: string, source: string | null, off: string[]) => {
  const g: Dom = globalThis;
  if (!g.axe) {
    let code = source;
    if (code === null) {
      code = g.localStorage.getItem(key);
      if (code === null) return null;
    } else {
      g.localStorage.setItem(key, code);
    }
    // Indirect eval: axe's source defines the global `axe`.
    (0, eval)(code);
  }
  const rules = Object.fromEntries(off.map((id) => [id, { enabled: false }]));
  // No CSS selector for each element found: axe's search for a short unique one is a part of
  // every check (docs/performance.md, "The test suite"). A violation names its elements by their
  // markup.
  const options = { resultTypes: ["violations"], rules, selectors: false };
  const r = await g.axe.run(g.document, options);
  return r.violations.map((v: Dom) => ({
    id: v.id as string,
    impact: v.impact as string,
    help: v.help as string,
    nodes: v.nodes.slice(0, 3).map((n: Dom) => String(n.html).slice(0, 200)),
  }));
});

const axeSessions = new WeakMap<Page, CDPSession>();

/** Per page and state (address, width, markup), the parts assertAccessible found clean. */
const cleanStates = new WeakMap<Page, Map<string, Set<string>>>();

/** A phone's viewport: the narrowest layout the pages are made for. */
const PHONE = { width: 375, height: 800 };

/** Runs `fn` with the page at a phone's width, then puts its viewport back. */
async function atPhoneWidth(page: Page, fn: () => Promise<void>): Promise<void> {
  const before = page.viewport() ?? VIEWPORT;
  await page.setViewport(PHONE);
  try {
    await fn();
  } finally {
    await page.setViewport(before);
  }
}

/** The page, at the width it has now, scrolls only down. */
async function assertNoSidewaysScroll(page: Page): Promise<void> {
  const { scroll, client } = await page.evaluate(() => {
    const root: Dom = (globalThis as Dom).document.documentElement;
    return { scroll: root.scrollWidth as number, client: root.clientWidth as number };
  });
  assert.ok(scroll <= client, `${page.url()} is ${scroll} px wide at ${client} px`);
}

/** At 375 px wide the page scrolls only down, never sideways. */
export async function assertFitsPhone(page: Page): Promise<void> {
  await atPhoneWidth(page, () => assertNoSidewaysScroll(page));
}

/** Every check of a finished page: no errors or CSP reports, accessible, fits a phone. */
export async function assertGoodPage(page: Page): Promise<void> {
  assertNoProblems(page);
  await assertAccessible(page);
  await assertFitsPhone(page);
}

/** assertGoodPage, with axe once more at 375 px (the layout changes there). */
export async function assertGoodAtBoth(page: Page): Promise<void> {
  assertNoProblems(page);
  await assertAccessible(page);
  await atPhoneWidth(page, async () => {
    await assertNoSidewaysScroll(page);
    await assertAccessible(page);
  });
}

/** Follows the link or button with `text`; the page it opens has `title` as heading and is good. */
export async function openByText(page: Page, text: string, title: string): Promise<void> {
  await clickByText(page, text);
  assert.equal(await heading(page), title);
  await assertGoodPage(page);
}

/** Goes to `url`; the page has `title` as heading and is good (assertGoodPage). */
export async function openUrl(page: Page, url: string, title: string): Promise<void> {
  await page.goto(url);
  assert.equal(await heading(page), title);
  await assertGoodPage(page);
}

/**
 * Goes to `url`; the page has `title` as heading, no errors and no CSP reports; no axe, no phone
 * width. For a page in a state that another check of the suite covers (axe runs anew on every
 * tab and server, a state it found clean elsewhere included), or one passed through while waiting
 * for a state that is checked; the caller says which.
 */
export async function revisit(page: Page, url: string, title: string): Promise<void> {
  await page.goto(url);
  assert.equal(await heading(page), title);
  assertNoProblems(page);
}
