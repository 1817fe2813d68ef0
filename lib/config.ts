import { z } from "zod";
import { canonicalEmail } from "./email.ts";
import { type Level, LOG_LEVELS } from "./log.ts";
import { type Network, parseNetworks } from "./networks.ts";

const optionalUrl = (schemes: string[]) =>
  z.string().optional().refine(
    (v) => v === undefined || (URL.canParse(v) && schemes.includes(new URL(v).protocol)),
    { message: `must be a ${schemes.map((s) => s.replace(":", "://")).join(" or ")} URL` },
  );

const optionalEmail = z.string().optional().refine(
  (v) => v === undefined || canonicalEmail(v) !== null,
  { message: "must be an e-mail address" },
);

/**
 * The sender: `addr@host` (a local host such as the default `noreply@localhost` included) or
 * `Display Name <addr@host>`; never CR/LF, which would let the value write mail headers.
 */
const senderSchema = z.string().optional().refine(
  (v) =>
    v === undefined ||
    /^(?:[^\r\n<>@"]{0,120} ?<[^\s<>@"]+@[^\s<>@"]+>|[^\s<>@"]+@[^\s<>@"]+)$/.test(v.trim()),
  { message: "must be an address (addr@host) or Name <addr@host>" },
);

/**
 * Sign-in providers: each is on when its client id and secret are set. The addresses default
 * to the provider's public ones; they can be changed for a self-managed GitLab, one Microsoft
 * tenant, or a test's local provider.
 */
const providerEnv = {
  GITHUB_CLIENT_ID: z.string().min(1).optional(),
  GITHUB_CLIENT_SECRET: z.string().min(1).optional(),
  GITHUB_URL: optionalUrl(["http:", "https:"]),
  GITHUB_API_URL: optionalUrl(["http:", "https:"]),
  GITLAB_CLIENT_ID: z.string().min(1).optional(),
  GITLAB_CLIENT_SECRET: z.string().min(1).optional(),
  GITLAB_URL: optionalUrl(["http:", "https:"]),
  GOOGLE_CLIENT_ID: z.string().min(1).optional(),
  GOOGLE_CLIENT_SECRET: z.string().min(1).optional(),
  GOOGLE_ISSUER: optionalUrl(["http:", "https:"]),
  MICROSOFT_CLIENT_ID: z.string().min(1).optional(),
  MICROSOFT_CLIENT_SECRET: z.string().min(1).optional(),
  MICROSOFT_TENANT: z.string().regex(/^[A-Za-z0-9.-]{1,100}$/).optional(),
  MICROSOFT_ISSUER: optionalUrl(["http:", "https:"]),
  OIDC_ISSUER: optionalUrl(["http:", "https:"]),
  OIDC_CLIENT_ID: z.string().min(1).optional(),
  OIDC_CLIENT_SECRET: z.string().min(1).optional(),
  OIDC_NAME: z.string().min(1).max(40).regex(/^[^\r\n<>]+$/).optional(),
};

/** The environment variables (README, "Configuration"); empty values count as unset. */
const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8000),
  HOSTNAME: z.string().min(1).default("0.0.0.0"),
  KV_PATH: z.string().min(1).optional(),
  BASE_URL: optionalUrl(["http:", "https:"]),
  SMTP_URL: optionalUrl(["smtp:", "smtps:"]),
  MAIL_API_URL: optionalUrl(["http:", "https:"]),
  MAIL_API_KEY: z.string().optional(),
  MAIL_FROM: senderSchema.default("noreply@localhost"),
  TEAM_INBOX: optionalEmail,
  REPORT_INBOX: optionalEmail,
  SERVICE_TOKEN: z.string().min(1).optional(),
  TRUST_PROXY: z.enum(["1", "0"]).optional(),
  MACHINE_SNAPSHOT: z.string().min(1).optional(),
  CATALOGUE_FILE: z.string().min(1).optional(),
  LOG_LEVEL: z.enum(LOG_LEVELS).default("info"),
  METRICS_TOKEN: z.string().min(16, { message: "must be at least 16 characters" }).optional(),
  TEST_CLOCK_FILE: z.string().min(1).optional(),
  SECRETS_KEY: z.string().min(32).optional(),
  CHANNEL_NETWORKS: z.string().optional().refine(
    (v) => v === undefined || Array.isArray(parseNetworks(v)),
  ),
  TEST_PROVIDER_ORIGIN: optionalUrl(["http:", "https:"]),
  WATCHDOG_URL: optionalUrl(["http:", "https:"]),
  ...providerEnv,
});

/** What each variable must be, as the refusal says it. */
const ENV_RULES: Record<string, string> = {
  PORT: "must be a port number from 0 to 65535",
  BASE_URL: "must be an http:// or https:// address",
  SMTP_URL: "must be an smtp:// or smtps:// address",
  MAIL_API_URL: "must be an http:// or https:// address",
  MAIL_FROM: "must be an address (addr@host) or Name <addr@host>",
  TEAM_INBOX: "must be an e-mail address",
  REPORT_INBOX: "must be an e-mail address",
  TRUST_PROXY: "must be 1 or 0",
  LOG_LEVEL: `must be one of ${LOG_LEVELS.join(", ")}`,
  METRICS_TOKEN: "must be at least 16 characters",
  SECRETS_KEY: "must be at least 32 characters (openssl rand -base64 32 makes one)",
  CHANNEL_NETWORKS: "must be networks separated by commas, as 192.168.1.0/24, fd00::/8",
  TEST_PROVIDER_ORIGIN: "must be an http:// or https:// address",
  WATCHDOG_URL: "must be an http:// or https:// address (a Healthchecks check's ping URL)",
  GITHUB_URL: "must be an http:// or https:// address",
  GITHUB_API_URL: "must be an http:// or https:// address",
  GITLAB_URL: "must be an http:// or https:// address",
  GOOGLE_ISSUER: "must be an http:// or https:// address",
  MICROSOFT_TENANT: "must be a tenant id or name (letters, digits, dots, dashes)",
  MICROSOFT_ISSUER: "must be an http:// or https:// address",
  OIDC_ISSUER: "must be an http:// or https:// address",
  OIDC_NAME: "must be 1 to 40 characters on one line",
};

/** The KV file when KV_PATH is not set (outside Deno Deploy); its folder is created. */
export const DEFAULT_KV_PATH = "./data/kv.sqlite3";

/**
 * Why KV_PATH cannot be used, or null: a file whose folder does not exist is most likely a
 * typo, and opening it would start an empty site as if the data were gone. Only the default
 * path's folder is created.
 */
export async function kvPathRefusal(
  env: Record<string, string | undefined>,
): Promise<string | null> {
  const path = env.KV_PATH || undefined;
  if (!path || /^https?:/.test(path) || path === ":memory:") return null;
  const dir = path.replace(/[\\/][^\\/]*$/, "");
  if (!dir || dir === path) return null;
  try {
    if ((await Deno.stat(dir)).isDirectory) return null;
    return `KV_PATH: ${dir} is not a folder (check the path)`;
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
    return `KV_PATH: the folder ${dir} does not exist (check the path, or create the folder)`;
  }
}

/** The first 16 bytes of every SQLite file, which is what a Deno KV file is. */
const SQLITE_MAGIC = "SQLite format 3\0";

/**
 * Why the KV file at `path` cannot be opened as one, or null: a file that is there but is not a
 * KV database (a folder, an empty file, any other file) would be refused by SQLite or, empty,
 * quietly made into a new database. `missing` says what to do when there is no file at all;
 * null lets a missing file be created (the server's first start).
 */
export async function kvFileRefusal(
  path: string | undefined,
  missing: string | null,
): Promise<string | null> {
  if (!path || /^https?:/.test(path) || path === ":memory:") return null;
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(path);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
    return missing && `KV_PATH: there is no KV database at ${path} (${missing})`;
  }
  if (!info.isFile) return `KV_PATH: ${path} is not a file (check the path)`;
  const head = new Uint8Array(16);
  const file = await Deno.open(path);
  let n: number | null;
  try {
    n = await file.read(head);
  } finally {
    file.close();
  }
  if (n !== 16 || new TextDecoder().decode(head) !== SQLITE_MAGIC) {
    return `KV_PATH: ${path} is not a KV database (check the path)`;
  }
  return null;
}

/** The key that seals channel secrets on a loopback BASE_URL without SECRETS_KEY: no secret. */
const DEVELOPMENT_SECRETS_KEY = "development only: set SECRETS_KEY in production";

export interface Config {
  port: number;
  hostname: string;
  /** undefined: Deno's default KV (the platform KV on Deno Deploy). */
  kvPath: string | undefined;
  baseUrl: string;
  smtpUrl?: string;
  mailApiUrl?: string;
  mailApiKey?: string;
  mailFrom: string;
  teamInbox?: string;
  reportInbox?: string;
  serviceToken?: string;
  trustProxy: boolean;
  machineSnapshot?: string;
  catalogueFile?: string;
  /** Operator log level (lib/log.ts). */
  logLevel: Level;
  /** Bearer token that opens GET /metrics to other addresses than loopback. */
  metricsToken?: string;
  /**
   * Test only: a file holding milliseconds the server's clock runs ahead of the system's
   * (lib/clock.ts `fileClock`); refused in production (`productionRefusal`).
   */
  testClockFile?: string;
  /**
   * Seals alert channels' secrets at rest (lib/secrets.ts): SECRETS_KEY, or on a loopback
   * BASE_URL the development key; undefined in production without SECRETS_KEY.
   */
  secretsKey?: string;
  /** Private networks self-hosted alert receivers may be in (CHANNEL_NETWORKS). */
  channelNetworks: Network[];
  /**
   * Test only: the origins of the alert providers with fixed addresses (Telegram, PagerDuty,
   * ...; lib/channels/mod.ts PROVIDERS), all of them at TEST_PROVIDER_ORIGIN; refused in
   * production.
   */
  providerOrigin?: string;
  /**
   * An outside dead-man check the minutely run pings (WATCHDOG_URL: `/start`, then the address
   * itself or `/fail`, as Healthchecks reads them; jobs/watchdog.ts).
   */
  watchdogUrl?: string;
  /** The sign-in providers that are configured, in the order the sign-in page shows them. */
  providers: ProviderConfig[];
}

type ProviderId = "github" | "gitlab" | "google" | "microsoft" | "oidc";

/**
 * One sign-in provider. `oidc`: OpenID Connect with discovery at `issuer`; `github`: GitHub's
 * OAuth 2 (no ID token), its web pages at `webUrl` and its REST API at `apiUrl`.
 */
export type ProviderConfig =
  & { id: ProviderId; name: string; clientId: string; clientSecret: string }
  & ({ kind: "oidc"; issuer: string } | { kind: "github"; webUrl: string; apiUrl: string });

type Env = z.infer<typeof envSchema>;

const PROVIDER_NAMES: [ProviderId, string][] = [
  ["github", "GITHUB"],
  ["gitlab", "GITLAB"],
  ["google", "GOOGLE"],
  ["microsoft", "MICROSOFT"],
  ["oidc", "OIDC"],
];

/**
 * An https address, or http to this machine only (a test's local provider). A base address
 * loses its final slashes (paths are appended to it); an issuer is kept exactly as written,
 * since OpenID Connect Discovery §4.3 compares it with the provider's own character for
 * character.
 */
function providerUrl(name: string, url: string, asIssuer = false): string {
  const u = new URL(url);
  if (u.protocol !== "https:" && !isLoopbackHost(u.hostname)) {
    throw new ConfigError(`invalid configuration: ${name}: must be an https:// address`);
  }
  return asIssuer ? url : url.replace(/\/+$/, "");
}

/** The configured providers; a client id without its secret (or the reverse) is refused. */
function providersOf(e: Env): ProviderConfig[] {
  const out: ProviderConfig[] = [];
  for (const [id, env] of PROVIDER_NAMES) {
    const clientId = e[`${env}_CLIENT_ID` as keyof Env] as string | undefined;
    const clientSecret = e[`${env}_CLIENT_SECRET` as keyof Env] as string | undefined;
    if (!clientId && !clientSecret) continue;
    if (!clientId || !clientSecret) {
      const missing = clientId ? `${env}_CLIENT_SECRET` : `${env}_CLIENT_ID`;
      throw new ConfigError(
        `invalid configuration: ${missing}: required with ${env}_CLIENT_${
          clientId ? "ID" : "SECRET"
        }`,
      );
    }
    const base = { id, clientId, clientSecret };
    if (id === "github") {
      out.push({
        ...base,
        name: "GitHub",
        kind: "github",
        webUrl: providerUrl("GITHUB_URL", e.GITHUB_URL ?? "https://github.com"),
        apiUrl: providerUrl("GITHUB_API_URL", e.GITHUB_API_URL ?? "https://api.github.com"),
      });
    } else if (id === "gitlab") {
      const issuer = providerUrl("GITLAB_URL", e.GITLAB_URL ?? "https://gitlab.com");
      out.push({ ...base, name: "GitLab", kind: "oidc", issuer });
    } else if (id === "google") {
      const issuer = providerUrl(
        "GOOGLE_ISSUER",
        e.GOOGLE_ISSUER ?? "https://accounts.google.com",
        true,
      );
      out.push({ ...base, name: "Google", kind: "oidc", issuer });
    } else if (id === "microsoft") {
      const tenant = e.MICROSOFT_TENANT ?? "common";
      const issuer = providerUrl(
        "MICROSOFT_ISSUER",
        e.MICROSOFT_ISSUER ?? `https://login.microsoftonline.com/${tenant}/v2.0`,
        true,
      );
      out.push({ ...base, name: "Microsoft", kind: "oidc", issuer });
    } else {
      if (!e.OIDC_ISSUER) {
        throw new ConfigError("invalid configuration: OIDC_ISSUER: required with OIDC_CLIENT_ID");
      }
      if (!e.OIDC_NAME) {
        throw new ConfigError("invalid configuration: OIDC_NAME: required with OIDC_CLIENT_ID");
      }
      out.push({
        ...base,
        name: e.OIDC_NAME.trim(),
        kind: "oidc",
        issuer: providerUrl("OIDC_ISSUER", e.OIDC_ISSUER, true),
      });
    }
  }
  return out;
}

export class ConfigError extends Error {}

const onDeploy = () => Boolean(Deno.env.get("DENO_DEPLOYMENT_ID"));

/** Reads and validates the environment once; a bad value names its variable. */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const cleaned = Object.fromEntries(
    Object.entries(env).filter(([, v]) => v !== undefined && v !== ""),
  );
  const parsed = envSchema.safeParse(cleaned);
  if (!parsed.success) {
    // One plain line per variable, never the validator's own words ("expected number...").
    const names = [...new Set(parsed.error.issues.map((i) => String(i.path[0])))];
    const lines = names.map((n) => `${n}: ${ENV_RULES[n] ?? "has a value that is not allowed"}`);
    throw new ConfigError(`invalid configuration: ${lines.join("; ")}`);
  }
  const e = parsed.data;
  if (e.MAIL_API_URL && !e.MAIL_API_KEY) {
    throw new ConfigError("invalid configuration: MAIL_API_KEY: required with MAIL_API_URL");
  }
  return {
    port: e.PORT,
    hostname: e.HOSTNAME,
    kvPath: e.KV_PATH ?? (onDeploy() ? undefined : DEFAULT_KV_PATH),
    baseUrl: (e.BASE_URL ?? defaultBaseUrl(e.HOSTNAME, e.PORT)).replace(/\/+$/, ""),
    smtpUrl: e.SMTP_URL,
    mailApiUrl: e.MAIL_API_URL,
    mailApiKey: e.MAIL_API_KEY,
    mailFrom: e.MAIL_FROM.trim(),
    teamInbox: e.TEAM_INBOX,
    reportInbox: e.REPORT_INBOX,
    serviceToken: e.SERVICE_TOKEN,
    trustProxy: e.TRUST_PROXY === "1",
    machineSnapshot: e.MACHINE_SNAPSHOT,
    catalogueFile: e.CATALOGUE_FILE,
    logLevel: e.LOG_LEVEL,
    metricsToken: e.METRICS_TOKEN,
    testClockFile: e.TEST_CLOCK_FILE,
    // Production never seals with a key written here: without SECRETS_KEY, channels that
    // hold secrets cannot be added there (kv/alerts/channels.ts says so).
    secretsKey: e.SECRETS_KEY ??
      (onDeploy() || (e.BASE_URL && !isLoopbackHost(new URL(e.BASE_URL).hostname))
        ? undefined
        : DEVELOPMENT_SECRETS_KEY),
    channelNetworks: e.CHANNEL_NETWORKS ? parseNetworks(e.CHANNEL_NETWORKS) as Network[] : [],
    providerOrigin: e.TEST_PROVIDER_ORIGIN?.replace(/\/+$/, ""),
    watchdogUrl: e.WATCHDOG_URL?.replace(/\/+$/, ""),
    providers: providersOf(e),
  };
}

/**
 * The address mailed links name when BASE_URL is unset: the listening address when it is a
 * loopback one (a person who browses 127.0.0.1 gets links to 127.0.0.1, where their session
 * cookie is), else localhost.
 */
function defaultBaseUrl(hostname: string, port: number): string {
  if (!isLoopbackHost(hostname)) return `http://localhost:${port}`;
  const bare = hostname.replace(/^\[|\]$/g, "");
  return `http://${bare.includes(":") ? `[${bare}]` : bare}:${port}`;
}

/** localhost, *.localhost, 127.0.0.0/8 and ::1: addresses only this machine reaches. */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/^\[|\]$/g, "").replace(/\.$/, "");
  return h === "localhost" || h.endsWith(".localhost") || /^127(\.\d{1,3}){3}$/.test(h) ||
    h === "::1" || h === "0:0:0:0:0:0:0:1";
}

/**
 * Why this configuration must not serve the public, or null. In production (on Deno Deploy, or
 * whenever BASE_URL is not a loopback address) the service needs BASE_URL (every mailed link
 * names it) and a mail transport: without one, sign-in links would be printed to standard
 * output, which is the platform's log.
 */
export function productionRefusal(
  config: Config,
  env: Record<string, string | undefined>,
  deploy = onDeploy(),
): string | null {
  const base = env.BASE_URL || undefined;
  if (deploy && !base) {
    return "BASE_URL: required on Deno Deploy (the public address every mailed link names)";
  }
  const production = deploy || (base !== undefined && !isLoopbackHost(new URL(base).hostname));
  if (production && config.testClockFile) {
    return "TEST_CLOCK_FILE: for tests only (it moves the server's clock); refused when " +
      "BASE_URL is not a loopback address or on Deno Deploy";
  }
  if (production && !config.smtpUrl && !config.mailApiUrl) {
    return "SMTP_URL (or MAIL_API_URL): required when BASE_URL is not a loopback address or on " +
      "Deno Deploy; without a mail transport sign-in links would be printed to the logs";
  }
  if (production && config.providerOrigin) {
    return "TEST_PROVIDER_ORIGIN: for tests only (it sends alerts for Telegram, PagerDuty, ... " +
      "elsewhere); refused when BASE_URL is not a loopback address or on Deno Deploy";
  }

  return null;
}

export function envRecord(): Record<string, string | undefined> {
  const keys = Object.keys(envSchema.shape);
  return Object.fromEntries(keys.map((k) => [k, Deno.env.get(k)]));
}
