/**
 * Sign-in providers for tests, on 127.0.0.1 only:
 *
 * - `openIdProvider`: a real OpenID provider (npm `oidc-provider`, its own login and consent
 *   pages), with the people a test gives it: `login` is what is typed on its login page, the
 *   claims are what its ID token and userinfo say.
 * - `gitHubLike`: a small server answering GitHub's documented OAuth endpoints
 *   (`/login/oauth/authorize`, `/login/oauth/access_token`, `/user`, `/user/emails`) the way
 *   GitHub's docs say, with switches for what a test needs (deny, fail, a replayed code).
 * - `browse`: a cookie-keeping client that follows redirects across both, as a browser would.
 */
import { createServer } from "node:http";
import { loadOidcProvider } from "./_dev_deps.ts";

export interface Person {
  sub: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
}

export interface OpenIdProvider extends AsyncDisposable {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Stops answering (as a provider that is down), or answers again. */
  down: boolean;
}

/**
 * How a test's provider differs from oidc-provider's defaults: `authMethods`, the client
 * authentications its token endpoint takes and its discovery offers
 * (`token_endpoint_auth_methods_supported`); `path`, where it is mounted, its issuer ending
 * in it exactly (Authentik's `/application/o/<app>/`, with the final slash).
 */
export interface ProviderShape {
  authMethods?: string[];
  path?: string;
}

/** A real OpenID provider on 127.0.0.1 for one client (`redirectUris` exact). */
export async function openIdProvider(
  redirectUris: string[],
  people: Record<string, Person>,
  shape: ProviderShape = {},
): Promise<OpenIdProvider> {
  const clientId = "catalogue-test";
  const clientSecret = "a-client-secret-for-tests-only-0123456789";
  // deno-lint-ignore no-explicit-any
  let handler: any = null;
  const state = { down: false };
  const server = createServer((req, res) => {
    if (state.down || !handler) {
      res.statusCode = 503;
      res.end("down");
      return;
    }
    if (shape.path) {
      // Mounted under the path, as Express mounts it: oidc-provider reads `originalUrl`.
      const mount = shape.path.replace(/\/$/, "");
      if (!req.url?.startsWith(`${mount}/`)) {
        res.statusCode = 404;
        res.end("not here");
        return;
      }
      // deno-lint-ignore no-explicit-any
      (req as any).originalUrl = req.url;
      req.url = req.url.slice(mount.length);
    }
    // The development login pages import a web font from another origin: not in tests.
    const end = res.end.bind(res);
    // deno-lint-ignore no-explicit-any
    (res as any).end = (chunk: any, ...rest: any[]) => {
      const text = typeof chunk === "string"
        ? chunk
        : chunk instanceof Uint8Array
        ? new TextDecoder().decode(chunk)
        : null;
      if (text !== null && text.includes("@import url(")) {
        chunk = text.replace(/@import url\([^)]*\);/g, "");
        if (!res.headersSent) {
          res.setHeader("content-length", new TextEncoder().encode(chunk).length);
        }
      }
      return end(chunk, ...rest);
    };
    handler(req, res);
  });
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", () => ok()));
  const port = (server.address() as { port: number }).port;
  const issuer = `http://127.0.0.1:${port}${shape.path ?? ""}`;
  const OidcProvider = await loadOidcProvider();
  const provider = new OidcProvider(issuer, {
    ...(shape.authMethods ? { clientAuthMethods: shape.authMethods } : {}),
    clients: [{
      client_id: clientId,
      client_secret: clientSecret,
      redirect_uris: redirectUris,
      response_types: ["code"],
      grant_types: ["authorization_code"],
      ...(shape.authMethods ? { token_endpoint_auth_method: shape.authMethods[0] } : {}),
    }],
    claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name"] },
    // deno-lint-ignore no-explicit-any
    findAccount: (_ctx: any, id: string) => {
      const person = people[id];
      if (!person) return undefined;
      return { accountId: id, claims: () => ({ ...person }) };
    },
    cookies: { keys: ["test-cookie-key-0123456789abcdef"] },
    features: { devInteractions: { enabled: true } },
  });
  handler = provider.callback();
  return {
    issuer,
    clientId,
    clientSecret,
    get down() {
      return state.down;
    },
    set down(v: boolean) {
      state.down = v;
    },
    async [Symbol.asyncDispose]() {
      server.closeAllConnections?.();
      await new Promise<void>((ok) => server.close(() => ok()));
    },
  };
}

export interface GitHubUser {
  id: number;
  login: string;
  name: string | null;
  emails: { email: string; verified: boolean; primary: boolean }[];
}

export interface GitHubLike extends AsyncDisposable {
  /** GITHUB_URL and GITHUB_API_URL for the service. */
  url: string;
  clientId: string;
  clientSecret: string;
  /** Who signs in at the next authorize (as if signed in at GitHub and pressing Authorize). */
  user: GitHubUser;
  /** The next authorize answers `error=access_denied` (the person pressed Cancel). */
  deny: boolean;
  /** The token endpoint answers 503. */
  down: boolean;
  /** Codes handed out (a test replays one). */
  codes: string[];
  /** Access tokens the service asked /user with. */
  tokensSeen: string[];
}

/** GitHub's OAuth endpoints as its docs describe them, for one OAuth app. */
export function gitHubLike(user: GitHubUser): GitHubLike {
  const clientId = "Iv1.testclient0001";
  const clientSecret = "github-test-secret-0123456789abcdef";
  const codes = new Map<string, { user: GitHubUser; redirect: string; challenge: string }>();
  const tokens = new Map<string, GitHubUser>();
  const json = (body: unknown, status = 200) =>
    new Response(JSON.stringify(body), {
      status,
      headers: { "content-type": "application/json; charset=utf-8" },
    });
  const gh: GitHubLike = {
    url: "",
    clientId,
    clientSecret,
    user,
    deny: false,
    down: false,
    codes: [],
    tokensSeen: [],
    async [Symbol.asyncDispose]() {
      await server.shutdown();
    },
  };
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    const url = new URL(req.url);
    if (url.pathname === "/login/oauth/authorize" && req.method === "GET") {
      const redirect = url.searchParams.get("redirect_uri") ?? "";
      const state = url.searchParams.get("state") ?? "";
      if (url.searchParams.get("client_id") !== clientId) {
        return new Response("no app", { status: 404 });
      }
      const back = new URL(redirect);
      back.searchParams.set("state", state);
      if (gh.deny) {
        back.searchParams.set("error", "access_denied");
        back.searchParams.set("error_description", "The user has denied your application access.");
      } else {
        const code = crypto.randomUUID().replaceAll("-", "");
        codes.set(code, {
          user: gh.user,
          redirect,
          challenge: url.searchParams.get("code_challenge") ?? "",
        });
        gh.codes.push(code);
        back.searchParams.set("code", code);
      }
      return Response.redirect(back.href, 302);
    }
    if (url.pathname === "/login/oauth/access_token" && req.method === "POST") {
      if (gh.down) return new Response("unavailable", { status: 503 });
      const form = new URLSearchParams(await req.text());
      const basic = req.headers.get("authorization");
      let id = form.get("client_id");
      let secret = form.get("client_secret");
      if (basic?.startsWith("Basic ")) {
        [id, secret] = atob(basic.slice(6)).split(":").map(decodeURIComponent);
      }
      if (id !== clientId || secret !== clientSecret) {
        return json({ error: "incorrect_client_credentials" });
      }
      const code = form.get("code") ?? "";
      const grant = codes.get(code);
      codes.delete(code);
      if (!grant || grant.redirect !== form.get("redirect_uri")) {
        // GitHub answers 200 with an error body (its docs: "bad_verification_code").
        return json({
          error: "bad_verification_code",
          error_description: "The code passed is incorrect or expired.",
        });
      }
      const verifier = form.get("code_verifier") ?? "";
      const digest = new Uint8Array(
        await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)),
      );
      const challenge = btoa(String.fromCharCode(...digest)).replaceAll("+", "-")
        .replaceAll("/", "_").replace(/=+$/, "");
      if (challenge !== grant.challenge) {
        return json({
          error: "bad_verification_code",
          error_description: "The code_verifier does not match.",
        });
      }
      const token = `gho_${crypto.randomUUID().replaceAll("-", "")}`;
      tokens.set(token, grant.user);
      return json({ access_token: token, token_type: "bearer", scope: "read:user,user:email" });
    }
    const auth = req.headers.get("authorization") ?? "";
    const bearer = auth.replace(/^(Bearer|token) /i, "");
    const who = tokens.get(bearer);
    if (url.pathname === "/user" || url.pathname === "/user/emails") {
      gh.tokensSeen.push(bearer);
      if (!who) return json({ message: "Bad credentials" }, 401);
      if (url.pathname === "/user") {
        return json({ id: who.id, login: who.login, name: who.name, email: null });
      }
      return json(who.emails.map((e) => ({ ...e, visibility: e.primary ? "private" : null })));
    }
    return new Response("not found", { status: 404 });
  });
  gh.url = `http://127.0.0.1:${server.addr.port}`;
  return gh;
}

/**
 * A client keeping cookies per host, following redirects itself (up to 20), like a browser.
 * Requests to an origin in `local` are answered in process (the app under test).
 */
export function browse(local: Record<string, (req: Request) => Promise<Response>> = {}) {
  const jars = new Map<string, Map<string, string>>();
  const jarOf = (host: string) => {
    let jar = jars.get(host);
    if (!jar) jars.set(host, jar = new Map());
    return jar;
  };
  async function one(url: string, init: RequestInit = {}): Promise<Response> {
    const u = new URL(url);
    const jar = jarOf(u.host);
    const headers = new Headers(init.headers);
    if (jar.size) headers.set("cookie", [...jar].map(([k, v]) => `${k}=${v}`).join("; "));
    if (init.method === "POST" && !headers.has("origin")) headers.set("origin", u.origin);
    const inProcess = local[u.origin];
    const res = inProcess
      ? await inProcess(new Request(url, { ...init, headers, redirect: "manual" }))
      : await fetch(url, { ...init, headers, redirect: "manual" });
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(";");
      const at = pair.indexOf("=");
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      const gone = attrs.some((a) =>
        /^\s*max-age=0/i.test(a) || /expires=Thu, 01 Jan 1970/i.test(a)
      );
      if (gone || value === "") jar.delete(name);
      else jar.set(name, value);
    }
    return res;
  }
  return {
    jarOf,
    one,
    /** Sends a page's form (its first, or the one whose action has `actionPart`) with `fields`. */
    async submit(
      page: { res: Response; url: string },
      fields: Record<string, string>,
      actionPart = "",
    ): Promise<{ res: Response; url: string }> {
      const html = await page.res.text();
      const actions = [...html.matchAll(/<form[^>]*action="([^"]+)"/g)].map((m) =>
        m[1].replaceAll("&amp;", "&")
      );
      const action = actions.find((a) => a.includes(actionPart));
      if (!action) throw new Error(`no form (${actionPart}) on ${page.url}: ${html.slice(0, 300)}`);
      return await this.go(new URL(action, page.url).href, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams(fields).toString(),
      });
    },
    /** Follows redirects; answers the last response and its address. */
    async go(url: string, init: RequestInit = {}): Promise<{ res: Response; url: string }> {
      let res = await one(url, init);
      for (let i = 0; i < 20 && res.status >= 300 && res.status < 400; i++) {
        await res.body?.cancel();
        url = new URL(res.headers.get("location")!, url).href;
        res = await one(url);
      }
      return { res, url };
    },
  };
}
