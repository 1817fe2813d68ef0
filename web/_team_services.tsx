/**
 * The team's page of every account's watched services (/team/services), with the machine's own
 * services for the owner.
 */
import { getAccount, isOwner } from "../kv/accounts/accounts.ts";
import { listAllServices, serviceView } from "../kv/service/commands.ts";
import { shownState } from "../kv/service/state.ts";
import type { Deps } from "../lib/deps.ts";
import { readSnapshot, type Snapshot } from "../lib/machine.ts";
import { UserText } from "./_layout.tsx";
import { resultText, StateBadge } from "./_state.tsx";
import { Table } from "./_table.tsx";
import { requireTeamPage, type WebCtx } from "./_web.tsx";
import { renderTeamPage } from "./_team.tsx";

export async function getTeamServices(deps: Deps, c: WebCtx) {
  const me = requireTeamPage(c);
  const now = deps.clock.now();
  const all = await listAllServices(deps.kv);
  const names = new Map<number, string>();
  for (const { service } of all) {
    if (!names.has(service.account)) {
      const a = (await getAccount(deps.kv, service.account)).value;
      names.set(service.account, a?.name || a?.email || `account ${service.account}`);
    }
  }
  const snap = isOwner(me) ? await readSnapshot(deps.config) : null;
  return renderTeamPage(
    c,
    "/team/services",
    "All watched services",
    <>
      <AllServices all={all} names={names} now={now} />
      {isOwner(me) ? <MachineSnapshot snap={snap} /> : null}
    </>,
  );
}

type Listed = Awaited<ReturnType<typeof listAllServices>>;

function AllServices(
  { all, names, now }: { all: Listed; names: Map<number, string>; now: number },
) {
  // The state (paused shows as such) and status: no maintenance windows are read here (one read
  // per account), so a service in a window shows what its checks say.
  const rows = all.map(({ service, beat }) => ({
    service,
    v: serviceView(service, beat, now, []),
  }));
  return (
    <Table
      caption="Every account's services"
      rows={rows}
      empty={<p>No services.</p>}
      columns={[
        {
          label: "Account",
          cell: ({ service }) => <UserText>{names.get(service.account) ?? ""}</UserText>,
        },
        { label: "Name", cell: ({ v }) => <UserText>{v.name}</UserText> },
        { label: "Target", cell: ({ service }) => <UserText>{service.check}</UserText> },
        { label: "State", cell: ({ v }) => <StateBadge state={shownState(v)} /> },
        { label: "Last result", cell: ({ v }) => <UserText>{resultText(v)}</UserText> },
      ]}
    />
  );
}

/** The owner's view of the machine's own services (lib/machine.ts), when configured. */
function MachineSnapshot({ snap }: { snap: Snapshot | null }) {
  return (
    <section aria-labelledby="machine-h">
      <h2 id="machine-h">This machine</h2>
      {snap
        ? (
          <>
            <p class="meta">
              <UserText>{snap.host}</UserText> · read {snap.read}
            </p>
            <ul>
              {snap.services.map((s) => (
                <li>
                  <UserText>{s.group}</UserText> · <UserText>{s.name}</UserText> ·{" "}
                  <UserText>{s.state}</UserText> · <UserText>{s.status}</UserText>
                </li>
              ))}
            </ul>
          </>
        )
        : <p>No machine snapshot is configured.</p>}
    </section>
  );
}
