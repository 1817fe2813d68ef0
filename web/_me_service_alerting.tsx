/**
 * What a service's owner sets on its page (/me/services/<id>), not what changes live: the alert
 * channels it uses besides mail, and its badge with the badge's address.
 */
import { listChannels } from "../kv/alerts/channels.ts";
import type { Service, ServiceView } from "../kv/service/commands.ts";
import type { Deps } from "../lib/deps.ts";
import { CopyField, PostButton, UserText } from "./_layout.tsx";

/** The alert channels and the badge: what the page's owner sets, not what changes live. */
export async function settingsSection(deps: Deps, s: Service, view: ServiceView) {
  const channels = await listChannels(deps.kv, s.account);
  const chosen = new Set(s.channels ?? []);
  return (
    <>
      <ChannelsPart service={s.id} channels={channels} chosen={chosen} />
      <BadgePart service={s} path={view.badge_path} base={deps.config.baseUrl} />
    </>
  );
}

/** The channels a service's alerts go to, besides mail. */
function ChannelsPart(
  { service, channels, chosen }: {
    service: number;
    channels: Awaited<ReturnType<typeof listChannels>>;
    chosen: Set<number>;
  },
) {
  return (
    <>
      <h2>Alert channels</h2>
      {channels.length
        ? (
          <form method="post" action={`/me/services/${service}/channels`}>
            <fieldset>
              <legend>Besides mail, alert these channels</legend>
              {channels.map((c) => (
                <div class="field">
                  <input
                    type="checkbox"
                    id={`ch-${c.id}`}
                    name="channel"
                    value={String(c.id)}
                    checked={chosen.has(c.id)}
                  />
                  <label for={`ch-${c.id}`}>
                    <UserText>{c.name}</UserText>
                  </label>
                </div>
              ))}
            </fieldset>
            <button type="submit" class="secondary">Save channels</button>
          </form>
        )
        : (
          <p>
            Alerts go by mail. <a href="/me/channels">Add a webhook channel</a>{" "}
            (Slack, Discord, ntfy or your own receiver).
          </p>
        )}
    </>
  );
}

/** The service's badge and its address. */
function BadgePart(
  { service: s, path, base }: { service: Service; path: string | null; base: string },
) {
  return (
    <>
      <h2>Badge</h2>
      {path
        ? (
          <>
            <p>
              <img src={path} alt={`Badge of ${s.name}`} />
            </p>
            <CopyField
              id="badge-url"
              label="Badge address (for a README)"
              value={`${base}${path}`}
            />
          </>
        )
        : <p>No badge address yet.</p>}
      <PostButton action={`/me/services/${s.id}/badge`} kind="secondary">
        {path ? "New badge address" : "Make a badge address"}
      </PostButton>
    </>
  );
}
