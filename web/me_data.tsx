/**
 * Your data (/me/data): the export download (kv/parts/export.ts, as GET /api/me/export) and the
 * account's erasure (kv/parts/erasure.ts, as DELETE /api/me) with the keep/remove choice for each
 * published proposal and the fresh sign-in step it needs.
 */
import { eraseAccount } from "../kv/parts/erasure.ts";
import { exportAccount } from "../kv/parts/export.ts";
import { proposalsOf } from "../kv/catalogue/proposals.ts";
import type { Deps } from "../lib/deps.ts";
import { callerOf } from "../http/guards.ts";
import { fail } from "../http/errors.ts";
import { readForm } from "./_form.tsx";
import { forgetWebSession } from "./_session.ts";
import { UserText } from "./_layout.tsx";
import { MeNav, Purpose } from "./_me.tsx";
import { requireAccount, seeOther, type WebCtx, webRouter } from "./_web.tsx";

async function getMeData(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const fresh = callerOf(deps, c).fresh;
  const published = (await proposalsOf(deps.kv, me.email)).filter((p) => p.published);
  return c.render(
    <>
      <MeNav here="/me/data" viewer={me} />
      <h1>Your data</h1>
      <Purpose here="/me/data" />
      <h2>Download everything</h2>
      <p>
        One JSON file with everything held about you: account, journal, services, files, proposals.
      </p>
      <p>
        <a href="/me/data/export" class="button" download>Download my data</a>
      </p>
      <h2>Erase your account</h2>
      <p>
        This signs out every device and removes the account with everything it owns. It cannot be
        undone.
      </p>
      {!fresh
        ? (
          <p class="notice">
            For this, sign in again first (a sign-in in the last 15 minutes is needed):{" "}
            <a href="/sign-in?next=/me/data&fresh=1">sign in again</a>.
          </p>
        )
        : (
          <form
            method="post"
            action="/me/data/erase"
            data-confirm="Erase your account for good?"
          >
            {published.length
              ? (
                <fieldset>
                  <legend>Your published modules</legend>
                  <p class="hint">
                    For each one: keep it in the catalogue under your name, or take your name off.
                  </p>
                  {published.map((p) => (
                    <div class="field">
                      <p>
                        <UserText>{p.title}</UserText>
                      </p>
                      <input
                        type="radio"
                        id={`keep-${p.id}`}
                        name={`p${p.id}`}
                        value="keep"
                        checked={p.attribution !== "remove"}
                      />
                      <label for={`keep-${p.id}`}>Keep my name on {p.title}</label>
                      <br />
                      <input
                        type="radio"
                        id={`remove-${p.id}`}
                        name={`p${p.id}`}
                        value="remove"
                        checked={p.attribution === "remove"}
                      />
                      <label for={`remove-${p.id}`}>Remove my name from {p.title}</label>
                    </div>
                  ))}
                </fieldset>
              )
              : null}
            <div class="field check">
              <input type="checkbox" id="f-sure" name="sure" required />
              <label for="f-sure">I understand that this erases my account for good</label>
            </div>
            <button type="submit" class="danger">Erase my account</button>
          </form>
        )}
    </>,
    { title: "Your data", noindex: true },
  );
}

async function getMeDataExport(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const data = await exportAccount(deps, me);
  c.header("Content-Disposition", `attachment; filename="account-${me.id}-export.json"`);
  c.header("Cache-Control", "no-store");
  return c.json(data, 200);
}

async function postMeDataErase(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  if (!callerOf(deps, c).fresh) return seeOther(c, "/me/data");
  const form = await readForm(c);
  if (form.sure !== "on") fail(400, "tick the box to confirm the erasure");
  const keep = new Set<number>();
  const remove = new Set<number>();
  for (const [k, v] of Object.entries(form)) {
    const m = /^p([0-9]{1,15})$/.exec(k);
    if (!m) continue;
    (v === "remove" ? remove : keep).add(Number(m[1]));
  }
  await eraseAccount(deps, me, { keep, remove });
  forgetWebSession(deps, c);
  return seeOther(c, "/erased");
}

export function dataPages(deps: Deps) {
  const app = webRouter();

  app.get("/me/data", (c) => getMeData(deps, c));

  app.get("/me/data/export", (c) => getMeDataExport(deps, c));

  app.post("/me/data/erase", (c) => postMeDataErase(deps, c));

  app.get("/erased", (c) =>
    c.render(
      <>
        <h1>Account erased</h1>
        <p>Your account and everything it held are gone. Thank you for having been here.</p>
        <p>
          <a href="/">Home</a>
        </p>
      </>,
      { title: "Account erased", noindex: true },
    ));

  return app;
}
