/**
 * The list of watched services (/me/services): state, last result and last check or beat of
 * each, the links to the account's other monitoring pages and, for the owner, this machine.
 */
import { isOwner } from "../kv/accounts/accounts.ts";
import {
  listServices,
  MAX_SERVICES,
  type ServiceView,
  serviceView,
} from "../kv/service/commands.ts";
import { KIND_WORDS } from "../kv/service/dashboard.ts";
import { lastHeard, shownState } from "../kv/service/state.ts";
import type { Deps } from "../lib/deps.ts";
import { readSnapshot } from "../lib/machine.ts";
import { AfterDot, UserText } from "./_layout.tsx";
import { resultText, StateBadge } from "./_state.tsx";
import { Table } from "./_table.tsx";
import { Ago, MeNav, Purpose, when } from "./_me.tsx";
import { requireAccount, SentAgain, type WebCtx } from "./_web.tsx";
import { listWindows } from "../kv/service/maintenance.ts";

const at = (s: string | null) => (s ? when(Date.parse(s)) : "never");

/** A service's name (a link to its page), its group and its place. */
function ServiceName({ s }: { s: ServiceView }) {
  return (
    <>
      <a href={`/me/services/${s.id}`}>
        <UserText>{s.name}</UserText>
      </a>
      <br />
      <span class="meta">
        <UserText>{s.group}</UserText>
        <AfterDot text={s.place} />
      </span>
    </>
  );
}

/** A row of the list: the service as its owner sees it, and when it was last heard from. */
interface Row {
  view: ServiceView;
  /** kv/service/state.ts `lastHeard`, as on the dashboard. */
  last: number | null;
}

function ServiceTable(props: { rows: Row[]; now: number }) {
  return (
    <Table
      caption="Watched services"
      rows={props.rows}
      columns={[
        {
          label: "Name",
          cell: ({ view }) => <ServiceName s={view} />,
        },
        { label: "Kind", cell: ({ view }) => KIND_WORDS[view.kind] ?? view.kind },
        { label: "State", cell: ({ view }) => <StateBadge state={shownState(view)} /> },
        {
          label: "Last result",
          cell: ({ view }) => (
            <>
              <UserText>{resultText(view)}</UserText>
              {view.ms !== null ? ` (${view.ms} ms)` : ""}
            </>
          ),
        },
        {
          label: "Last check or beat",
          cell: ({ last }) => <Ago at={last} now={props.now} />,
        },
      ]}
    />
  );
}

const listPage = async (deps: Deps, c: WebCtx) => {
  const me = requireAccount(c);
  const now = deps.clock.now();
  const windows = await listWindows(deps.kv, me.id);
  const rows = (await listServices(deps.kv, me.id)).map(({ service, beat }) => {
    const view = serviceView(service, beat, now, windows);
    return { view, last: lastHeard(view, beat) };
  });
  return (
    <>
      <MeNav here="/me/services" viewer={me} />
      <h1>Watched services</h1>
      <Purpose here="/me/services" />
      <SentAgain c={c} made="its service was added once" />
      {rows.length ? <ServiceTable rows={rows} now={now} /> : <p>No services watched yet.</p>}
      <p>
        <a href="/me/services/new" class="button">Add a service</a>{" "}
        <span class="hint">(up to {MAX_SERVICES} services)</span>
      </p>
      <p>
        <a href="/me/channels">Alert channels</a> · <a href="/me/status-page">Status page</a> ·{" "}
        <a href="/me/maintenance">Maintenance windows</a> · <a href="/me/reports">Uptime report</a>
        {" "}
        · <a href="/me/api-keys">API keys</a> ·{" "}
        <a href="/me/services/import">Import from Healthchecks or Uptime Kuma</a> ·{" "}
        <a href="/me/ping-key">Ping key</a>
      </p>
      {isOwner(me) ? <MachinePart deps={deps} /> : null}
    </>
  );
};

const MachinePart = async ({ deps }: { deps: Deps }) => {
  const snap = await readSnapshot(deps.config);
  if (!snap) return <p>No machine snapshot configured.</p>;
  return (
    <section aria-labelledby="machine-h">
      <h2 id="machine-h">This machine</h2>
      <p class="meta">
        <UserText>{snap.host}</UserText> · read {at(snap.read)}
      </p>
      <ul>
        {snap.services.map((s) => (
          <li>
            <UserText>{s.name}</UserText> · <UserText>{s.state}</UserText> ·{" "}
            <UserText>{s.status}</UserText>
          </li>
        ))}
      </ul>
    </section>
  );
};

export async function getMeServices(deps: Deps, c: WebCtx) {
  return c.render(await listPage(deps, c), { title: "Watched services", noindex: true });
}
