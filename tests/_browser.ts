/**
 * Browser tests: headless Chromium (from the npm package @sparticuz/chromium, so a fresh
 * machine needs nothing else) driven by puppeteer-core through the real server process
 * (tests/_real_server.ts), which mails through a local SMTP sink (tests/_smtp.ts). Pages are
 * used as a person would: links, buttons and fields are found by their visible text and
 * labels; axe-core checks each page for serious or critical accessibility problems.
 *
 * One browser and one server per test file (starting them costs seconds):
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
 * frame of every open tab in the browser process: about half of its CPU in these tests. Plain
 * software compositing draws the same pages (layout, styles and colours are the renderer's)
 * for a fraction of it.
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
 * made each navigation cost half as much again in Chromium; how the page is loaded, laid out and
 * run does not change without it.
 */
const ONE_FRAME_HOST = "--disable-features=RenderDocument";

/**
 * The package starts every renderer as a new program (for AWS Lambda, which cannot fork one);
 * forked from Chromium's zygote, a new browser context's first page costs 40 % less CPU.
 */
const NO_ZYGOTE = "--no-zygote";

/**
 * Pages here live for a few seconds, and axe (half a megabyte of script) is loaded anew in each
 * checked document: V8's optimising compilers (Maglev, TurboFan) compiled it again every time,
 * on threads of their own, for runs too short to gain from it. The interpreter and the baseline
 * compiler run the same code: a checked page costs half the CPU.
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
 * (about 1.4 s of CPU and 0.7 s a file).
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
  /** Signs `page` in from the mailed link, as a person would; ends on the account page. */
  signIn(page: Page, email: string): Promise<void>;
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
    async signIn(page, email) {
      await page.goto(`${base}/sign-in`);
      await page.goto(await web.requestLink(page, email));
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

const norm = (s: string) => s.replace(/\s+/g, " ").trim();

/** The first visible link or button whose text (or accessible label) is exactly `text`. */
export async function byText(page: Page, text: string): Promise<ElementHandle> {
  const handle = await page.evaluateHandle((wanted: string) => {
    const document: Dom = (globalThis as Dom).document;
    const norm = (s: string) => s.replace(/\s+/g, " ").trim();
    const candidates: Dom[] = document.querySelectorAll(
      "a[href], button, input[type=submit], input[type=button], [role=button], summary",
    );
    for (const el of candidates) {
      const text = el.tagName === "INPUT" ? el.value : el.innerText;
      const label = el.getAttribute("aria-label");
      const visible = el.offsetParent !== null || el.getClientRects().length > 0;
      if (visible && (norm(text ?? "") === wanted || norm(label ?? "") === wanted)) return el;
    }
    return null;
  }, norm(text));
  const el = handle.asElement() as ElementHandle | null;
  if (!el) {
    const seen = await page.$$eval(
      "a[href], button",
      (els: Dom[]) => els.map((e) => e.innerText.trim()).filter(Boolean),
    );
    throw new Error(`no link or button "${text}" on ${page.url()}; there are: ${seen.join(" | ")}`);
  }
  return el;
}

/**
 * Clicks the link or button with this text. By default waits for the page it leads to
 * (links, form buttons); `{navigates: false}` for buttons that act in place.
 */
export async function clickByText(
  page: Page,
  text: string,
  opts: { navigates?: boolean } = {},
): Promise<void> {
  const el = await byText(page, text);
  if (opts.navigates === false) return await el.click();
  await Promise.all([page.waitForNavigation({ waitUntil: "load" }), el.click()]);
}

/** A selector for an element id, whatever characters it holds. */
const byId = (id: string) => `[id=${JSON.stringify(id)}]`;

/** The id of the form control labelled exactly `label` (its <label for>, or aria-label). */
async function controlId(page: Page, label: string): Promise<string> {
  const id = await page.evaluate((wanted: string) => {
    const document: Dom = (globalThis as Dom).document;
    const norm = (s: string) => s.replace(/\s+/g, " ").trim();
    for (const l of document.querySelectorAll("label")) {
      if (norm(l.innerText) === wanted) {
        const c = l.control;
        if (c) {
          if (!c.id) c.id = `control-${Math.random().toString(36).slice(2)}`;
          return c.id;
        }
      }
    }
    for (const c of document.querySelectorAll("[aria-label]")) {
      if (norm(c.getAttribute("aria-label") ?? "") === wanted && c.id) return c.id;
    }
    return null;
  }, norm(label));
  if (!id) {
    const seen = await page.$$eval("label", (ls: Dom[]) => ls.map((l) => l.innerText.trim()));
    throw new Error(`no field labelled "${label}" on ${page.url()}; labels: ${seen.join(" | ")}`);
  }
  return id;
}

/**
 * Enters `value` in the field labelled `label`, replacing what it held: focused, then the text
 * put in as a paste or an input method does (one `input` event; the field's own limits apply).
 * Key by key cost a protocol round trip and a renderer task per key, and no page here listens to
 * the keys of a form field.
 */
export async function fillByLabel(page: Page, label: string, value: string): Promise<void> {
  const sel = byId(await controlId(page, label));
  await page.$eval(sel, (el: Dom) => {
    el.value = "";
    el.focus();
  });
  if (value) await page.keyboard.sendCharacter(value);
}

/** Ticks (or clears) the checkbox labelled `label`. */
export async function checkByLabel(page: Page, label: string, on = true): Promise<void> {
  const sel = byId(await controlId(page, label));
  const now = await page.$eval(sel, (el: Dom) => el.checked as boolean);
  if (now !== on) await page.click(sel);
}

/** Picks the option with this visible text in the select labelled `label`. */
export async function selectByLabel(page: Page, label: string, option: string): Promise<void> {
  const sel = byId(await controlId(page, label));
  const value = await page.$eval(sel, (el: Dom, text: string) => {
    const o = [...el.options].find((o: Dom) => o.text.trim() === text);
    return o ? (o.value as string) : null;
  }, option);
  if (value === null) throw new Error(`no option "${option}" in "${label}"`);
  await page.select(sel, value);
}

/** Chooses a file for the file field labelled `label`. */
export async function uploadByLabel(page: Page, label: string, path: string): Promise<void> {
  const el = await page.$(byId(await controlId(page, label)));
  // deno-lint-ignore no-explicit-any
  await (el as ElementHandle<any>).uploadFile(path);
}

/** The page's first heading. */
export async function heading(page: Page): Promise<string> {
  return await page.$eval("h1", (h: Dom) => h.innerText.trim() as string);
}

/** The visible text of the main content. */
export async function mainText(page: Page): Promise<string> {
  return await page.$eval("main", (m: Dom) => m.innerText as string);
}

/** The message shown beside the field labelled `label` (empty when none). */
export async function fieldError(page: Page, label: string): Promise<string> {
  const id = await controlId(page, label);
  return await page.$eval(byId(id), (el: Dom) => {
    const document: Dom = (globalThis as Dom).document;
    const ids: string[] = (el.getAttribute("aria-describedby") ?? "").split(/\s+/);
    const err = ids.map((i) => document.getElementById(i)).find((e: Dom) =>
      e?.classList.contains("error")
    );
    return err ? (err.innerText.trim() as string) : "";
  });
}

// ---- checks every page should pass ---------------------------------------------------------

/**
 * axe-core on the page as it is: fails on any serious or critical violation. A state of the
 * page axe already found clean (same address, width, colour scheme and markup) is not checked
 * again: openUrl and then assertGoodAtBoth on the same page, say.
 */
export async function assertAccessible(page: Page): Promise<void> {
  const state = await page.evaluate(() => {
    const g: Dom = globalThis;
    const html: string = g.document.documentElement.outerHTML;
    let hash = 0;
    for (let i = 0; i < html.length; i++) hash = (hash * 31 + html.charCodeAt(i)) | 0;
    const dark = g.matchMedia("(prefers-color-scheme: dark)").matches;
    return [g.location.href, g.innerWidth, dark, html.length, hash].join(" ");
  });
  const clean = cleanStates.get(page) ?? new Set<string>();
  cleanStates.set(page, clean);
  if (clean.has(state)) return;
  const found = await runAxe(page);
  const bad = found.filter((v) => v.impact === "serious" || v.impact === "critical");
  assert.deepEqual(bad, [], `accessibility problems on ${page.url()}`);
  clean.add(state);
}

interface Violation {
  id: string;
  impact: string;
  help: string;
  targets: string[];
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

/** Where a page's copy of axe is kept between its documents (its origin's local storage). */
const AXE_KEY = `axe-core ${axe.version}`;

/**
 * Runs axe in a world of its own on the page (the DevTools protocol's isolated world: the same
 * document, none of the page's scripts, and not bound by the page's CSP). axe is about 650 KB:
 * sent over the protocol for every document, it cost more than the check. It is sent once per
 * page and origin, kept in local storage, and read from there into each new document.
 */
async function runAxe(page: Page): Promise<Violation[]> {
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
      arguments: [{ value: AXE_KEY }, { value: source }, { value: MILD_RULES }],
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
const AXE_IN_PAGE = String(async (key: string, source: string | null, mild: string[]) => {
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
  const rules = Object.fromEntries(mild.map((id) => [id, { enabled: false }]));
  const r = await g.axe.run(g.document, { resultTypes: ["violations"], rules });
  return r.violations.map((v: Dom) => ({
    id: v.id as string,
    impact: v.impact as string,
    help: v.help as string,
    targets: v.nodes.slice(0, 3).map((n: Dom) => String(n.target)),
  }));
});

const axeSessions = new WeakMap<Page, CDPSession>();

/** Per page, the states assertAccessible found clean. */
const cleanStates = new WeakMap<Page, Set<string>>();

/** At 375 px wide the page scrolls only down, never sideways. */
export async function assertFitsPhone(page: Page): Promise<void> {
  const before = page.viewport();
  await page.setViewport({ width: 375, height: 800 });
  try {
    const { scroll, client } = await page.evaluate(() => {
      const root: Dom = (globalThis as Dom).document.documentElement;
      return { scroll: root.scrollWidth as number, client: root.clientWidth as number };
    });
    assert.ok(scroll <= client, `${page.url()} is ${scroll} px wide at 375 px`);
  } finally {
    if (before) await page.setViewport(before);
  }
}

/** Every check of a finished page: no errors or CSP reports, accessible, fits a phone. */
export async function assertGoodPage(page: Page): Promise<void> {
  assertNoProblems(page);
  await assertAccessible(page);
  await assertFitsPhone(page);
}

/** assertGoodPage at 1280 px, and axe once more at 375 px (the layout changes there). */
export async function assertGoodAtBoth(page: Page): Promise<void> {
  await assertGoodPage(page);
  await page.setViewport({ width: 375, height: 800 });
  try {
    await assertAccessible(page);
  } finally {
    await page.setViewport({ width: 1280, height: 900 });
  }
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
