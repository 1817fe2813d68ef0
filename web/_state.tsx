/**
 * A service's state as every page shows it: a colour, an icon and a word, never the colour
 * alone (site.css `.state-*`, light and dark).
 */

/**
 * A service's last result in words: its status text, or "OK" for a heartbeat whose last signal
 * was a success sent without one (the ping's own answer; Healthchecks keeps no text either).
 */
export const resultText = (v: { status: string; beat: string | null }) =>
  v.status || (v.beat ? "OK" : "");

export const STATE_TEXT: Record<string, string> = {
  ok: "Up",
  warn: "Warning",
  off: "Down",
  unreachable: "Unreachable",
  wait: "Waiting",
  maintenance: "Maintenance",
  paused: "Paused",
  nodata: "No data (monitor down)",
};

/** Each state's icon on a 16 px grid, drawn in the text's colour. */
const ICONS: Record<string, string> = {
  ok: "M3 8.5l3 3 7-7",
  warn: "M8 2l6.5 12h-13zM8 6.5v3.5M8 12v.5",
  off: "M4 4l8 8M12 4l-8 8",
  wait: "M8 3a5 5 0 1 1 0 10a5 5 0 1 1 0-10M8 5.5v3l2 1.5",
  maintenance: "M10.5 2.5a3 3 0 0 0-3.6 3.9L2.5 10.8l2.7 2.7 4.4-4.4a3 3 0 0 0 3.9-3.6l-2 2-2-2z",
  paused: "M5.5 3v10M10.5 3v10",
  nodata: "M3 8h10",
  unreachable: "M6.5 9.5l-2 2a2 2 0 0 1-3-3l2-2M9.5 6.5l2-2a2 2 0 0 1 3 3l-2 2M6 4V2M10 14v-2",
};

export function StateIcon(props: { state: string }) {
  return (
    <svg class="icon" viewBox="0 0 16 16" width="16" height="16" aria-hidden="true">
      <path d={ICONS[props.state] ?? ICONS.wait} />
    </svg>
  );
}

/** The state in its colour, with its icon and word. */
export function StateBadge(props: { state: string }) {
  return (
    <span class={`tag state state-${props.state}`}>
      <StateIcon state={props.state} />
      {STATE_TEXT[props.state] ?? props.state}
    </span>
  );
}

/** A bell struck through, on the same grid. */
const UNHEARD_ICON = "M4.5 11V7.5a3.5 3.5 0 0 1 7 0V11l1 1.5h-9zM6.5 14.5h3M2 2l12 12";

/**
 * The flag of a service nobody hears about: its alerts are off, which stops the mail and every
 * channel alike (docs/api.md), so no one is told when it goes off. One small element, in words,
 * icon and colour; null when someone is told.
 */
export function NobodyTold(props: { alerts: boolean; short?: boolean }) {
  if (props.alerts) return null;
  const words = "Nobody is told when this goes off";
  return (
    <span class="tag state state-warn unheard" title={props.short ? words : undefined}>
      <svg class="icon" viewBox="0 0 16 16" width="16" height="16" aria-hidden="true">
        <path d={UNHEARD_ICON} />
      </svg>
      {props.short
        ? (
          <>
            <span aria-hidden="true">Nobody told</span>
            <span class="visually-hidden">{words}</span>
          </>
        )
        : words}
    </span>
  );
}

/** An alert's way as an icon on the 16 px grid: mail, a chat, a push, an incident tool, a hook. */
const WAY_ICONS: Record<string, string> = {
  mail: "M2 4h12v8H2zM2 4l6 5 6-5",
  chat: "M2.5 3h11v7.5H7l-3 2.5v-2.5H2.5z",
  push: "M5 1.5h6v13H5zM7.5 12.5h1",
  incident: "M4 12V8a4 4 0 0 1 8 0v4M2.5 12.5h11M8 1.5v1M2.5 4l1 1M13.5 4l-1 1",
  webhook:
    "M6.5 9.5a3 3 0 0 0 4.2 0l2-2a3 3 0 0 0-4.2-4.2l-.7.7M9.5 6.5a3 3 0 0 0-4.2 0l-2 2a3 3 0 0 0 4.2 4.2l.7-.7",
};
const PUSH = new Set(["ntfy", "gotify", "pushover"]);
const INCIDENT = new Set(["pagerduty", "opsgenie"]);
/** The family of a channel kind (lib/channels/mod.ts KINDS) its icon shows. */
export const wayOf = (kind: string) =>
  kind === "webhook"
    ? "webhook"
    : PUSH.has(kind)
    ? "push"
    : INCIDENT.has(kind)
    ? "incident"
    : "chat";

/**
 * The ways a service alerts, one icon each with its name on hover and for screen readers
 * ("Mail", "Team chat (slack)"); a service whose alerts are off shows NobodyTold instead.
 */
export function AlertWays(
  props: { alerts: boolean; channels: { name: string; kind: string }[]; short?: boolean },
) {
  if (!props.alerts) return <NobodyTold alerts={false} short={props.short} />;
  const ways = [{ name: "Mail", way: "mail" }].concat(
    props.channels.map((c) => ({ name: `${c.name} (${c.kind})`, way: wayOf(c.kind) })),
  );
  return (
    <span class="ways">
      {ways.map((w) => (
        <svg class="icon" viewBox="0 0 16 16" width="16" height="16" role="img" aria-label={w.name}>
          <title>{w.name}</title>
          <path d={WAY_ICONS[w.way]} />
        </svg>
      ))}
    </span>
  );
}
