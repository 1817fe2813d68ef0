/**
 * Devices (/me/devices): every live session of the account (the browser's own marked), ending
 * one, ending all, signing this one out. The same kv/accounts/sessions.ts functions as
 * /api/me/devices. New-device notices link here.
 */
import { endAllSessions, endSession, listSessions } from "../kv/accounts/sessions.ts";
import type { Deps } from "../lib/deps.ts";
import { forgetWebSession } from "./_session.ts";
import { providerName } from "./me_sign_in_methods.tsx";
import { PostButton } from "./_layout.tsx";
import { Table } from "./_table.tsx";
import { MeNav, Purpose, when } from "./_me.tsx";
import { requireAccount, routeId, seeOther, type WebCtx, webRouter } from "./_web.tsx";

async function getMeDevices(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const now = deps.clock.now();
  const own = c.get("session")?.hash;
  const items = (await listSessions(deps.kv, me.id))
    .filter(({ session }) => session.expires > now)
    .sort((a, b) => b.session.id - a.session.id);
  const ended = c.req.query("ended");
  return c.render(
    <>
      <MeNav here="/me/devices" />
      <h1>Devices</h1>
      <Purpose here="/me/devices" />
      {ended ? <p class="notice" role="status">Ended {ended} session(s).</p> : null}
      <p>
        Each browser or program you signed in (with a mailed link, another account or a passkey)
        holds one session. End any you do not recognise.
      </p>
      <Table
        caption="Signed-in devices, newest first"
        rows={items}
        columns={[
          {
            label: "Signed in",
            cell: ({ session, hash }) => (
              <>
                {when(session.created)}
                {hash === own ? <strong>(this browser)</strong> : null}
              </>
            ),
          },
          {
            label: "With",
            cell: ({ session }) => session.via ? providerName(deps, session.via) : "Mailed link",
          },
          { label: "Last used", cell: ({ session }) => when(session.last_used) },
          { label: "Expires", cell: ({ session }) => when(session.expires) },
          {
            label: "Action",
            cell: ({ session, hash }) =>
              hash === own
                ? <PostButton action="/sign-out" kind="secondary">Sign out here</PostButton>
                : (
                  <PostButton
                    action={`/me/devices/${session.id}/end`}
                    kind="secondary"
                    label={`End the session signed in ${when(session.created)}`}
                  >
                    End
                  </PostButton>
                ),
          },
        ]}
      />
      <PostButton
        action="/me/devices/end-all"
        kind="danger"
        confirm="Sign out everywhere?"
        block
      >
        End every session (this one too)
      </PostButton>
    </>,
    { title: "Devices", noindex: true },
  );
}

async function postMeDevicesIdEnd(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const ok = await endSession(deps.kv, me.id, routeId(c));
  return seeOther(c, `/me/devices?ended=${ok ? 1 : 0}`);
}

async function postMeDevicesEndAll(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  await endAllSessions(deps.kv, me.id);
  forgetWebSession(deps, c);
  return seeOther(c, "/sign-in");
}

export function devicePages(deps: Deps) {
  const app = webRouter();

  app.get("/me/devices", (c) => getMeDevices(deps, c));

  app.post("/me/devices/:id{[0-9]{1,15}}/end", (c) => postMeDevicesIdEnd(deps, c));

  app.post("/me/devices/end-all", (c) => postMeDevicesEndAll(deps, c));

  return app;
}
