/**
 * The table of a person's alert channels on /me/channels: each channel's state with its last
 * error, how many services it alerts, and its actions (apply to all, test, for new services, remove).
 */
import { CHANNEL_KINDS } from "../lib/channels/mod.ts";
import { type ChannelInUse } from "../kv/service/commands.ts";
import { PostButton, UserText } from "./_layout.tsx";
import { when } from "./_me.tsx";
import { Table } from "./_table.tsx";

const STATE_WORDS = {
  ok: ["✅", "Working"],
  untested: ["🕓", "Not tested yet"],
  failing: ["⚠️", "Failing"],
  broken: ["⛔", "Broken"],
} as const;

/** A channel's state as the page says it: working only once something went through. */
const shownChannelState = (
  ch: { state: "ok" | "failing" | "broken"; last_delivered: string | null },
) => ch.state === "ok" && ch.last_delivered === null ? "untested" : ch.state;

/** How many services alert a channel, in words, with a warning when none does. */
function UsePart({ ch, services }: { ch: ChannelInUse; services: number }) {
  if (services === 0) return <span class="hint">No services yet</span>;
  if (ch.services === 0) return <span class="tag state state-warn">⚠️ None of {services}</span>;
  return <>{ch.services === services ? "All" : ch.services} of {services}</>;
}

export function ChannelList({ items, services }: { items: ChannelInUse[]; services: number }) {
  return (
    <Table
      caption="Your channels"
      rows={items}
      empty={<p>No channels yet.</p>}
      columns={[
        {
          label: "Name",
          cell: (ch) => (
            <>
              <UserText>{ch.name}</UserText>
              <br />
              <span class="hint">
                <UserText>{ch.url_hint}</UserText>
              </span>
            </>
          ),
        },
        { label: "Kind", cell: (ch) => CHANNEL_KINDS[ch.kind]?.label ?? ch.kind },
        { label: "State", cell: (ch) => <ChannelStatePart ch={ch} /> },
        { label: "Services", cell: (ch) => <UsePart ch={ch} services={services} /> },
        { label: "New services", cell: (ch) => <ForNewSwitch ch={ch} /> },
        { label: "Added", cell: (ch) => when(Date.parse(ch.created)) },
        { label: "Actions", cell: (ch) => <ChannelActions ch={ch} services={services} /> },
      ]}
    />
  );
}

/** A channel's state, with its last error when it has one. */
function ChannelStatePart({ ch }: { ch: ChannelInUse }) {
  const shown = shownChannelState(ch);
  return (
    <>
      <span class={`tag channel-${shown}`}>
        {STATE_WORDS[shown][0]} {STATE_WORDS[shown][1]}
      </span>
      {ch.last_error
        ? (
          <p class="hint">
            Last error {when(Date.parse(ch.last_error.at))}: {ch.last_error.error}
          </p>
        )
        : null}
    </>
  );
}

/** What can be done with a channel: apply it to every service (when some lack it), test, remove. */
function ChannelActions({ ch, services }: { ch: ChannelInUse; services: number }) {
  return (
    <>
      {ch.services < services
        ? (
          <>
            <PostButton
              action={`/me/channels/${ch.id}/apply`}
              kind="secondary"
              label={`Apply to all my services: ${ch.name}`}
            >
              Apply to all my services
            </PostButton>
            {" "}
          </>
        )
        : null}
      <PostButton
        action={`/me/channels/${ch.id}/test`}
        kind="secondary"
        label={`Send a test alert to ${ch.name}`}
      >
        Send a test alert
      </PostButton>{" "}
      <PostButton
        action={`/me/channels/${ch.id}/delete`}
        kind="danger"
        confirm="Remove this channel from every service?"
        label={`Remove channel ${ch.name}`}
      >
        Remove channel
      </PostButton>
    </>
  );
}

/** Whether new services get the channel, and the button that turns it the other way. */
function ForNewSwitch({ ch }: { ch: ChannelInUse }) {
  const on = ch.for_new_services;
  const words = on ? "Stop using for new services" : "Use for new services";
  return (
    <>
      <span>{on ? "✓ Ticked for new services" : "Not ticked for new services"}</span>
      <PostButton
        action={`/me/channels/${ch.id}/for-new`}
        kind="secondary"
        label={`${words}: ${ch.name}`}
        fields={{ for_new_services: on ? "" : "on" }}
        block
      >
        {words}
      </PostButton>
    </>
  );
}
