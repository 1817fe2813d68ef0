/**
 * What the channel kind tests share: one HTTPS receiver on 127.0.0.1 standing for every
 * provider (a test CA valid for their names; the injected resolver gives each name a public
 * address and the connector takes every connection to the receiver), the alerts of each event
 * as kv/service/looks.ts and kv/alerts/grouped_alerts.ts build them, and a way to send one.
 */
import type { AlertPayload, Channel } from "../kv/alerts/channels.ts";
import { enqueuePosts, sendNow } from "../kv/alerts/outbox.ts";
import { atomic, commit } from "../kv/_atomic.ts";
import type { Config } from "../lib/config.ts";
import { systemTls } from "../lib/net.ts";
import { fakeResolver, type TestApp, testApp } from "./_helpers.ts";
import { type Certs, localHttp, loopbackConnector, makeCerts } from "./_servers.ts";

export const HOSTS = [
  "hooks.slack.com",
  "discord.com",
  "api.telegram.org",
  "events.pagerduty.com",
  "events.eu.pagerduty.com",
  "api.opsgenie.com",
  "api.eu.opsgenie.com",
  "api.pushover.net",
  "ntfy.sh",
  "chat.googleapis.com",
  "prod.westeurope.logic.azure.com",
  "chat.example.org",
  "matrix.example.org",
  "gotify.example.org",
  "zulip.example.org",
  "hooks.example.org",
  "ntfy.lan",
];

export interface Got {
  method: string;
  /** Path and query. */
  path: string;
  host: string;
  headers: Headers;
  body: string;
}

export interface Receiver extends AsyncDisposable {
  t: TestApp;
  got: Got[];
  /** What the receiver answers next (default 200 with `{"ok":true}`); it may answer later. */
  answer: (g: Got) => Response | Promise<Response>;
  /** The JSON body of the request `i` back from the last (-1: the last). */
  json(i?: number): unknown;
  /** The form body of a request, as an object. */
  form(i?: number): Record<string, string>;
  last(i?: number): Got;
}

/**
 * The receivers' test CA and certificate for HOSTS, made once a process: each receiver trusts
 * only the CA it is given, so sharing one changes nothing a test sees, and making them spawns
 * openssl several times for every test. They stay valid far past the time any test moves its
 * clock to.
 */
let receiverCerts: Promise<Certs> | undefined;

function hostCerts(): Promise<Certs> {
  receiverCerts ??= makeCerts(HOSTS, 30).catch((err) => {
    receiverCerts = undefined;
    throw err;
  });
  return receiverCerts;
}

/** The receiver and an app whose resolver and connector lead every host to it. */
export async function receiver(
  config: Partial<Config> = {},
  table: Record<string, string[]> = {},
): Promise<Receiver> {
  const certs = await hostCerts();
  const got: Got[] = [];
  const r = {
    got,
    answer: (_g: Got) => Response.json({ ok: true }),
  } as Receiver;
  const srv = localHttp(async (req) => {
    const u = new URL(req.url);
    const g = {
      method: req.method,
      path: u.pathname + u.search,
      host: req.headers.get("host") ?? "",
      headers: req.headers,
      body: await req.text(),
    };
    got.push(g);
    return r.answer(g);
  }, certs);
  const hosts = Object.fromEntries(HOSTS.map((h) => [h, ["93.184.216.34"]]));
  r.t = await testApp({
    connector: loopbackConnector(srv.port),
    resolver: fakeResolver({ ...hosts, ...table }),
    tls: systemTls([certs.ca]),
    config,
  });
  // The receiver's certificate is judged by the service's clock.
  r.t.clock.set(Date.now());
  r.last = (i = -1) => got.at(i)!;
  r.json = (i = -1) => JSON.parse(got.at(i)!.body);
  r.form = (i = -1) => Object.fromEntries(new URLSearchParams(got.at(i)!.body));
  r[Symbol.asyncDispose] = async () => {
    await r.t[Symbol.asyncDispose]();
    await srv.close();
  };
  return r;
}

export const AT = "2026-03-02T09:05:00.000Z";
export const LINK = "http://test.local/me/services/7";
const backup = { id: 7, name: "Backup", kind: "webhook" };

export const OFF: AlertPayload = {
  event: "off",
  title: 'Watched service "Backup" is off',
  text: "tar: disk full <&>",
  service: { ...backup, state: "off", status: "tar: disk full <&>" },
  at: AT,
  link: LINK,
};

export const BACK: AlertPayload = {
  event: "back",
  title: 'Watched service "Backup" is back',
  text: "ok",
  service: { ...backup, state: "ok", status: "ok" },
  at: AT,
  link: LINK,
};

export const REMINDER: AlertPayload = {
  event: "reminder",
  title: 'Watched service "Backup" is still off',
  text: "tar: disk full <&>",
  service: { ...backup, state: "off", status: "tar: disk full <&>" },
  at: AT,
  link: LINK,
};

export const EXPIRY: AlertPayload = {
  event: "expiry",
  title: 'Certificate of "Shop" expires soon',
  text: "The certificate expires 2026-03-09T00:00:00.000Z (within 7 days).",
  service: { id: 8, name: "Shop", kind: "tls", state: "ok", status: "TLS ok" },
  at: AT,
  link: "http://test.local/me/services/8",
};

/** Two services of one place: Backup went off, NAS came back. */
export const GROUPED: AlertPayload = {
  event: "off",
  title: "2 of 3 services at LAN changed",
  text: "Backup: off (timed out)\nNAS: back (HTTP 200)",
  service: null,
  services: [
    { ...backup, state: "off", status: "timed out" },
    { id: 9, name: "NAS", kind: "url", state: "ok", status: "HTTP 200" },
  ],
  group: { name: "LAN", total: 3 },
  at: AT,
  link: "http://test.local/me/services",
};

/** Queues one alert to a channel in its own atomic and delivers it, as an alert's look does. */
export async function send(t: TestApp, ch: Channel, payload: AlertPayload) {
  const op = atomic(t.kv);
  const ids = enqueuePosts(op, [ch], payload, t.clock.now());
  await commit(op);
  return await sendNow(t.deps, ids[0]);
}

/** Adds a channel through the API; answers its stored record. */
export async function addChannel(
  t: TestApp,
  token: string,
  body: Record<string, unknown>,
): Promise<Channel> {
  const r = await t.req("POST", "/api/me/channels", { token, body });
  if (r.status !== 200) throw new Error(`channel refused: ${r.text}`);
  const { getChannel } = await import("../kv/alerts/channels.ts");
  const me = await t.req("GET", "/api/me", { token });
  return (await getChannel(t.kv, (me.body as { id: number }).id, r.body.item.id))!;
}
