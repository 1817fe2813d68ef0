/**
 * Talking to sign-in providers (OAuth 2 and OpenID Connect) through `oauth4webapi`: the
 * address to send the browser to, and what the provider says of the person once it sends the
 * browser back. Authorization code with PKCE (S256), `state` always, `nonce` and a verified ID
 * token (issuer, audience, expiry, signature through the provider's published keys) for
 * OpenID providers. GitHub speaks OAuth 2 only: who it is comes from its REST API (`/user`,
 * `/user/emails`), where only a verified primary address counts.
 *
 * Nothing here keeps the access token: it is used for the two GitHub calls and dropped.
 * Errors are `SignInProblem`s naming what happened; their messages never hold a code, a token
 * or an address.
 */
import * as oauth from "oauth4webapi";
import type { ProviderConfig } from "./config.ts";
import { canonicalEmail } from "./email.ts";
import { isLoopbackHost } from "./config.ts";
import { log } from "./log.ts";

/** What went wrong with a provider sign-in, each with its own page sentence. */
export type ProblemReason =
  | "denied"
  | "state"
  | "expired"
  | "down"
  | "refused"
  | "client"
  | "unverified"
  | "conflict"
  | "taken";

export class SignInProblem extends Error {
  constructor(readonly reason: ProblemReason, message: string = reason) {
    super(message);
    this.name = "SignInProblem";
  }
}

/** What a provider says of the person who signed in with it. */
export interface ProviderProfile {
  /** The provider's stable id of the person (`sub`; GitHub's numeric user id). */
  subject: string;
  /** Canonical address, or null when the provider gives none we accept. */
  email: string | null;
  /** True only when the provider says it verified the address. */
  emailVerified: boolean;
  /** The name the provider gives ("" when none). */
  name: string;
}

/** The secrets of one authorization request; kept for the browser until it comes back. */
interface AuthRequest {
  state: string;
  nonce: string;
  verifier: string;
}

const TIMEOUT_MS = 10_000;

/** Plain http is allowed only to this machine (a test's provider). */
const insecure = (url: string) => isLoopbackHost(new URL(url).hostname);

function httpOptions(url: string) {
  return {
    [oauth.allowInsecureRequests]: insecure(url),
    signal: AbortSignal.timeout(TIMEOUT_MS),
  };
}

/** A Microsoft "common" / "organizations" issuer names the tenant in each token. */
const TENANT_TEMPLATE = "{tenantid}";

/**
 * oauth4webapi's two hooks for such issuers (exported for openid-client, which uses them for
 * Entra ID the same way): skip the discovery's issuer comparison, and give the issuer each
 * ID token is checked against.
 */
const internals = oauth as unknown as { _nodiscoverycheck: symbol; _expectedIssuer: symbol };

/** The provider's metadata: discovery for OpenID providers, GitHub's fixed endpoints. */
async function serverOf(p: ProviderConfig): Promise<oauth.AuthorizationServer> {
  if (p.kind === "github") {
    return {
      issuer: p.webUrl,
      authorization_endpoint: `${p.webUrl}/login/oauth/authorize`,
      token_endpoint: `${p.webUrl}/login/oauth/access_token`,
    };
  }
  // Discovery §4.1: the document is at the issuer with any final slash taken off, plus
  // `/.well-known/openid-configuration`; §4.3: its `issuer` must then be the issuer exactly as
  // written (Authentik's ends in a slash, Keycloak's and Entra ID's do not).
  const issuer = new URL(p.issuer);
  const res = await reach(
    () => oauth.discoveryRequest(issuer, { algorithm: "oidc", ...httpOptions(p.issuer) }),
    p,
  );
  const multiTenant = p.id === "microsoft" && /\/(common|organizations|consumers)\//.test(p.issuer);
  try {
    const as = await oauth.processDiscoveryResponse(
      multiTenant ? internals._nodiscoverycheck as unknown as URL : issuer,
      res,
    );
    if (multiTenant) {
      if (!as.issuer.includes(TENANT_TEMPLATE)) throw new SignInProblem("down");
      // The token's own tenant, put into the template: checked like any issuer afterwards.
      // deno-lint-ignore no-explicit-any
      (as as any)[internals._expectedIssuer] = (r: { claims: { tid?: unknown } }) =>
        typeof r.claims.tid === "string" ? as.issuer.replace(TENANT_TEMPLATE, r.claims.tid) : "";
    }
    return as;
  } catch (err) {
    if (err instanceof SignInProblem) throw err;
    const cause = (err as { cause?: { attribute?: unknown; body?: { issuer?: unknown } } }).cause;
    const attribute = cause?.attribute;
    const body = cause?.body;
    log("warn", "sign-in provider discovery failed", {
      provider: p.id,
      why: attribute === "issuer"
        ? "the document's issuer is not the configured issuer exactly"
        : oneLine((err as Error).message),
      configured: p.issuer,
      theirs: attribute === "issuer" && typeof body?.issuer === "string"
        ? oneLine(body.issuer)
        : undefined,
    });
    throw new SignInProblem("down", "the provider's configuration could not be read");
  }
}

/**
 * How this server proves itself at the token endpoint (RFC 6749 §2.3.1, OpenID Connect
 * Discovery's `token_endpoint_auth_methods_supported`, whose default is
 * `client_secret_basic`): HTTP Basic when offered, the body form only when it alone is.
 * GitHub documents the body form.
 */
function clientAuthOf(p: ProviderConfig, as: oauth.AuthorizationServer): oauth.ClientAuth {
  if (p.kind === "github") return oauth.ClientSecretPost(p.clientSecret);
  const offered = as.token_endpoint_auth_methods_supported;
  const onlyPost = Array.isArray(offered) && !offered.includes("client_secret_basic") &&
    offered.includes("client_secret_post");
  return onlyPost
    ? oauth.ClientSecretPost(p.clientSecret)
    : oauth.ClientSecretBasic(p.clientSecret);
}

/** A provider's words, safe for a log line: one line, bounded. */
const oneLine = (text: string) => text.replace(/[\p{Cc}\p{Cf}]+/gu, " ").slice(0, 300);

/** The OAuth error codes that mean this server's client id or secret is not accepted. */
const CLIENT_ERRORS = new Set([
  "invalid_client",
  "unauthorized_client",
  "incorrect_client_credentials",
]);

/**
 * A refusal at the token endpoint: the provider's `error` and `error_description` go to the
 * owner's log (never the code, the verifier or the secret); a refused client is its own
 * problem, so the page can say which setting to check.
 */
async function tokenRefusal(p: ProviderConfig, err: unknown): Promise<SignInProblem | null> {
  let error: unknown;
  let description: unknown;
  let status: number | undefined;
  if (err instanceof oauth.ResponseBodyError) {
    ({ error, error_description: description, status } = err);
  } else if (err instanceof oauth.WWWAuthenticateChallengeError) {
    status = err.status;
    const said = err.cause.find((c) => c.parameters.error)?.parameters;
    error = said?.error;
    description = said?.error_description;
    if (error === undefined) {
      const body = await err.response.json().catch(() => null) as Record<string, unknown> | null;
      error = body?.error;
      description = body?.error_description;
    }
  } else if (err instanceof oauth.OperationProcessingError) {
    // GitHub answers its errors with 200 and an `error` in the body.
    const body = (err.cause as { body?: Record<string, unknown> } | undefined)?.body;
    if (typeof body?.error !== "string") return null;
    ({ error, error_description: description } = body);
    status = 200;
  } else return null;
  log("warn", "sign-in provider refused the token request", {
    provider: p.id,
    status,
    error: typeof error === "string" ? oneLine(error) : undefined,
    error_description: typeof description === "string" ? oneLine(description) : undefined,
  });
  return typeof error === "string" && CLIENT_ERRORS.has(error)
    ? new SignInProblem("client", "the provider refused this server's client id or secret")
    : null;
}

/** A request to the provider; an unreachable provider or a 5xx is "down". */
async function reach(send: () => Promise<Response>, p: ProviderConfig): Promise<Response> {
  let res: Response;
  try {
    res = await send();
  } catch (err) {
    log("warn", "sign-in provider did not answer", {
      provider: p.id,
      why: oneLine(err instanceof Error ? err.message : String(err)),
    });
    throw new SignInProblem("down", "the provider did not answer");
  }
  if (res.status >= 500) {
    await res.body?.cancel();
    log("warn", "sign-in provider answered with an error", { provider: p.id, status: res.status });
    throw new SignInProblem("down", "the provider answered with an error");
  }
  return res;
}

const SCOPES = { oidc: "openid email profile", github: "read:user user:email" };

/** New secrets for one authorization request. */
export function newAuthRequest(): AuthRequest {
  return {
    state: oauth.generateRandomState(),
    nonce: oauth.generateRandomNonce(),
    verifier: oauth.generateRandomCodeVerifier(),
  };
}

/** Where the browser goes to sign in with `p`; it comes back to `redirectUri`. */
export async function authorizationUrl(
  p: ProviderConfig,
  redirectUri: string,
  req: AuthRequest,
): Promise<string> {
  const as = await serverOf(p);
  if (!as.authorization_endpoint) throw new SignInProblem("down");
  const url = new URL(as.authorization_endpoint);
  url.searchParams.set("client_id", p.clientId);
  url.searchParams.set("redirect_uri", redirectUri);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("scope", SCOPES[p.kind]);
  url.searchParams.set("state", req.state);
  url.searchParams.set("code_challenge", await oauth.calculatePKCECodeChallenge(req.verifier));
  url.searchParams.set("code_challenge_method", "S256");
  if (p.kind === "oidc") url.searchParams.set("nonce", req.nonce);
  if (p.kind === "github") url.searchParams.set("allow_signup", "true");
  return url.href;
}

/**
 * The browser is back at `callback` (the redirect URI with the provider's answer): checks
 * `state`, exchanges the code (with the PKCE verifier) and reads who signed in.
 */
export async function finishAuthorization(
  p: ProviderConfig,
  redirectUri: string,
  callback: URL,
  req: AuthRequest,
): Promise<ProviderProfile> {
  const as = await serverOf(p);
  const client: oauth.Client = { client_id: p.clientId };
  let params: URLSearchParams;
  try {
    params = oauth.validateAuthResponse(as, client, callback.searchParams, req.state);
  } catch (err) {
    if (err instanceof oauth.AuthorizationResponseError) {
      throw err.error === "access_denied"
        ? new SignInProblem("denied", "the sign-in was declined at the provider")
        : new SignInProblem("refused", "the provider refused the sign-in");
    }
    throw new SignInProblem("state", "the answer does not belong to this browser's sign-in");
  }
  const auth = clientAuthOf(p, as);
  const res = await reach(() =>
    oauth.authorizationCodeGrantRequest(
      as,
      client,
      auth,
      params,
      redirectUri,
      req.verifier,
      httpOptions(as.token_endpoint!),
    ), p);
  let tokens: oauth.TokenEndpointResponse;
  try {
    tokens = await oauth.processAuthorizationCodeResponse(as, client, res, {
      expectedNonce: p.kind === "oidc" ? req.nonce : oauth.expectNoNonce,
      requireIdToken: p.kind === "oidc",
    });
    if (p.kind === "oidc") {
      await oauth.validateApplicationLevelSignature(as, res, httpOptions(as.jwks_uri!));
    }
  } catch (err) {
    if (err instanceof SignInProblem) throw err;
    const refusal = await tokenRefusal(p, err);
    if (refusal) throw refusal;
    // A used or unknown code, a token that fails its checks: the provider's word is not taken.
    throw new SignInProblem("refused", "the provider's answer could not be verified");
  }
  if (p.kind === "github") return await gitHubProfile(p, p.apiUrl, tokens.access_token);
  const claims = oauth.getValidatedIdTokenClaims(tokens)! as Record<string, unknown>;
  if (claims.email !== undefined || !as.userinfo_endpoint) return profileOf(claims);
  // Providers that keep the address out of the ID token (OpenID Core 5.4) give it at
  // userinfo, for the same subject.
  const info = await reach(
    () =>
      oauth.userInfoRequest(as, client, tokens.access_token, httpOptions(as.userinfo_endpoint!)),
    p,
  );
  try {
    const more = await oauth.processUserInfoResponse(as, client, String(claims.sub), info);
    return profileOf({
      ...more,
      ...claims,
      email: more.email,
      email_verified: more.email_verified,
    });
  } catch {
    throw new SignInProblem("refused", "the provider did not say who signed in");
  }
}

function profileOf(claims: Record<string, unknown>): ProviderProfile {
  const raw = typeof claims.email === "string" ? claims.email : "";
  const email = raw ? canonicalEmail(raw) : null;
  const name = [claims.name, claims.preferred_username, claims.nickname]
    .find((n) => typeof n === "string" && n.trim()) as string | undefined;
  return {
    subject: String(claims.sub),
    email,
    // Only a literal true: a missing claim is not a verification.
    emailVerified: email !== null && claims.email_verified === true,
    name: cleanName(name ?? ""),
  };
}

/** A provider's name as an account name: one line, 120 characters at most. */
function cleanName(name: string): string {
  return name.replace(/[\p{Cc}\p{Cf}]+/gu, " ").replace(/\s+/g, " ").trim().slice(0, 120);
}

/** GitHub's person and addresses (docs: GET /user, GET /user/emails). */
async function gitHubProfile(
  p: ProviderConfig,
  apiUrl: string,
  token: string,
): Promise<ProviderProfile> {
  const headers = {
    authorization: `Bearer ${token}`,
    accept: "application/vnd.github+json",
    "x-github-api-version": "2022-11-28",
    "user-agent": "catalogue-sign-in",
  };
  const get = async (path: string) => {
    const res = await reach(
      () => fetch(`${apiUrl}${path}`, { headers, signal: AbortSignal.timeout(TIMEOUT_MS) }),
      p,
    );
    if (!res.ok) {
      await res.body?.cancel();
      throw new SignInProblem("refused", "the provider did not say who signed in");
    }
    return await res.json().catch(() => null);
  };
  const user = await get("/user") as { id?: unknown; login?: unknown; name?: unknown } | null;
  const emails = await get("/user/emails") as
    | { email?: unknown; verified?: unknown; primary?: unknown }[]
    | null;
  if (!user || typeof user.id !== "number" || !Array.isArray(emails)) {
    throw new SignInProblem("refused", "the provider did not say who signed in");
  }
  const primary = emails.find((e) => e?.primary === true && typeof e.email === "string");
  const email = primary ? canonicalEmail(primary.email as string) : null;
  const name = typeof user.name === "string" && user.name.trim()
    ? user.name
    : typeof user.login === "string"
    ? user.login
    : "";
  return {
    subject: String(user.id),
    email,
    emailVerified: email !== null && primary?.verified === true,
    name: cleanName(name),
  };
}
