/**
 * Apprise-style URLs as one more way to enter a channel (`tgram://token/chat`, ...): each is
 * read into a kind and its fields, then checked like any other input. Only what maps onto a
 * kind here is read; other Apprise schemes are refused by name.
 */

type FromApprise = { kind: string; fields: Record<string, string> } | { error: string };

const SCHEMES = "tgram, discord, slack, gchat, mmost(s), ntfy(s), gotify(s), matrix(s), pover, " +
  "pagerduty, opsgenie, json(s)";

/** The schemes whose `user@` part is a token this service reads. */
const TAKES_USER = new Set(["ntfy", "ntfys", "matrix", "matrixs", "pover", "pagerduty"]);

/** The parts of `scheme://[user@]host/path?query`, as written (tokens keep their case). */
export function fromApprise(raw: string): FromApprise {
  const m = raw.trim().match(/^([a-z]+):\/\/([^?#]*)(?:\?([^#]*))?$/i);
  if (!m || !m[2]) return { error: `not an Apprise URL (one of ${SCHEMES})` };
  const scheme = m[1].toLowerCase();
  const at = m[2].lastIndexOf("@", m[2].indexOf("/") === -1 ? undefined : m[2].indexOf("/"));
  const user = at > 0 ? decodeURIComponent(m[2].slice(0, at)) : "";
  const [host, ...path] = m[2].slice(at + 1).split("/").filter(Boolean).map(decodeURIComponent);
  if (!host) return { error: `not an Apprise URL (one of ${SCHEMES})` };
  // A user part is a token only where the kind reads one (ntfy's token, Matrix's access token,
  // Pushover's user key, PagerDuty's integration key); a `user:password` pair nowhere. Any
  // other is refused, never dropped: the address it stood for would be used without it.
  if (at > 0 && (!TAKES_USER.has(scheme) || user.includes(":"))) {
    return {
      error: `${scheme}:// with a user or password: credentials in the address are refused ` +
        (TAKES_USER.has(scheme) ? "(put the token alone before the @)" : "(this kind takes none)"),
    };
  }
  const query = new URLSearchParams(m[3] ?? "");
  const region: Record<string, string> = query.get("region") === "eu" ? { region: "eu" } : {};
  const secure = scheme.endsWith("s") ? "https" : "http";
  switch (scheme) {
    case "tgram":
      if (!path[0]) return { error: "tgram://bot_token/chat_id: the chat id is missing" };
      return {
        kind: "telegram",
        fields: { bot_token: host, chat_id: path[0] },
      };
    case "discord":
      if (!path[0]) return { error: "discord://webhook_id/webhook_token: the token is missing" };
      return {
        kind: "discord",
        fields: { url: `https://discord.com/api/webhooks/${host}/${path[0]}` },
      };
    case "slack":
      if (path.length < 2) return { error: "slack://TokenA/TokenB/TokenC: a token is missing" };
      return {
        kind: "slack",
        fields: { url: `https://hooks.slack.com/services/${host}/${path[0]}/${path[1]}` },
      };
    case "gchat":
      if (path.length < 2) {
        return { error: "gchat://workspace/webhook_key/webhook_token: a part is missing" };
      }
      return {
        kind: "google_chat",
        fields: {
          url: `https://chat.googleapis.com/v1/spaces/${host}/messages?key=${
            encodeURIComponent(path[0])
          }&token=${encodeURIComponent(path[1])}`,
        },
      };
    case "mmost":
    case "mmosts":
      if (!path.length) return { error: "mmosts://host/token: the token is missing" };
      return {
        kind: "mattermost",
        fields: { url: `${secure}://${host}/hooks/${path[path.length - 1]}` },
      };
    case "ntfy":
    case "ntfys": {
      // ntfy://topic is ntfy.sh's; ntfys://[token@]host/topic another server's.
      const own = path.length > 0;
      const topic = own ? path[path.length - 1] : host;
      const server = own ? `${secure}://${host}` : "https://ntfy.sh";
      return {
        kind: "ntfy",
        fields: { url: `${server}/${topic}`, ...(user ? { token: user } : {}) },
      };
    }
    case "gotify":
    case "gotifys":
      if (!path.length) return { error: "gotifys://host/token: the token is missing" };
      return {
        kind: "gotify",
        fields: {
          url: `${secure}://${host}${path.length > 1 ? "/" + path.slice(0, -1).join("/") : ""}`,
          token: path[path.length - 1],
        },
      };
    case "matrix":
    case "matrixs": {
      const room = path[0] ?? "";
      if (!user || !room) {
        return { error: "matrixs://access_token@host/!room:server: a part is missing" };
      }
      return {
        kind: "matrix",
        fields: { homeserver: `${secure}://${host}`, room, access_token: user },
      };
    }
    case "pover":
      if (!user) return { error: "pover://user_key@app_token: the user key is missing" };
      return {
        kind: "pushover",
        fields: {
          user_key: user,
          app_token: host,
          ...(path[0] ? { device: path[0] } : {}),
        },
      };
    case "pagerduty":
      return {
        kind: "pagerduty",
        fields: { routing_key: user || host, ...region },
      };
    case "opsgenie":
      return { kind: "opsgenie", fields: { api_key: host, ...region } };
    case "json":
    case "jsons":
      return {
        kind: "webhook",
        fields: {
          url: `${secure}://${host}/${path.map(encodeURIComponent).join("/")}${
            m[3] ? `?${m[3]}` : ""
          }`,
        },
      };
    default:
      return { error: `${scheme}:// is not read here (one of ${SCHEMES})` };
  }
}
