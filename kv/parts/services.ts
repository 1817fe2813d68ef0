import { iso } from "../../lib/clock.ts";
import { withDurations } from "../../lib/runs.ts";
import { channelView, eraseChannels, listChannels } from "../alerts/channels.ts";
import { dropQueuedOf, postsOf } from "../alerts/outbox.ts";
import { serviceHistory } from "../service/windows.ts";
import { listWindows } from "../service/maintenance.ts";
import { eraseStatusPage, getStatusPage, listStatusPages } from "../status/settings.ts";
import { eraseProjectBadge } from "../service/badges.ts";
import { listEvents } from "../service/heartbeats.ts";
import type { AccountPart } from "./_part.ts";
import { countServices, eraseServices, listServices, serviceView } from "../service/commands.ts";

/** What the services area holds of an account: watched services, their last
 * beats and their kept history (kv/service/history.ts). */
export const servicesPart: AccountPart = {
  name: "services",
  sections: {
    services: {
      what: "Services you watch: settings, check, last result and last heartbeat (the " +
        "heartbeat address is stored only as a hash and not repeated)",
      kept: "Until you delete them or erase the account; state changes and check times " +
        "90 days, the last 100 heartbeat events",
    },
    status_page: {
      what: "Your public status page: whether it is published, its title, the services " +
        "it lists and their notes (badge addresses are on the services)",
      kept: "Until you change it or erase the account",
    },
    status_pages: {
      what: "All your status pages (the first one above included): each one's address, " +
        "whether it is published, its title, the services it lists in their groups and notes",
      kept: "Until you change or delete them or erase the account",
    },
    channels: {
      what: "Your webhook alert channels (address and signing secret) and alerts queued " +
        "for them",
      kept: "Channels until you delete them; a queued alert until delivered, at most 8 days",
    },
  },
  async export(deps, account) {
    const now = deps.clock.now();
    const services = [];
    const windows = await listWindows(deps.kv, account.id);
    for (const { service, beat } of await listServices(deps.kv, account.id)) {
      const h = await serviceHistory(deps.kv, service, now, windows);
      services.push({
        ...serviceView(service, beat, now, windows),
        check: service.check,
        // When the runner looks at it next.
        due: iso(service.due),
        // The kept history (90 days): every state change and the per-day figures with data.
        changes: h.changes.map((c) => ({ ...c, at: iso(c.at) })),
        days: h.days.filter((d) => d.uptime !== null || d.checks > 0),
        events: withDurations(await listEvents(deps.kv, account.id, service.id)).map((e) => ({
          ...e,
          at: iso(e.at),
        })),
        ...(beat?.start ? { last_start: { ...beat.start, at: iso(beat.start.at) } } : {}),
        ...(beat?.failed ? { last_failure: { ...beat.failed, at: iso(beat.failed.at) } } : {}),
      });
    }
    // Each secret field as "set": tokens and webhook addresses are never given out again.
    const channels = (await listChannels(deps.kv, account.id)).map(channelView);
    const queued = (await postsOf(deps.kv, account.id)).map((p) => ({
      ...p,
      created: iso(p.created),
      next: iso(p.next),
    }));
    const page = await getStatusPage(deps.kv, account.id);
    const pages = await listStatusPages(deps.kv, account.id);
    return { services, channels: { channels, queued }, status_page: page, status_pages: pages };
  },
  async erase(deps, account) {
    await eraseServices(deps, account.id);
    await eraseChannels(deps, account.id);
    await dropQueuedOf(deps.kv, account.id, "post");
    await eraseStatusPage(deps.kv, account.id);
    await eraseProjectBadge(deps.kv, account.id);
    return {};
  },
  async counts(deps, account) {
    return { services: await countServices(deps.kv, account.id) };
  },
};
