/**
 * Other products' addresses on the pages: the account's ping key (made or renewed, shown
 * once), a heartbeat's Uptime Kuma push address (shown once), its "POST only" setting, and the
 * import of a Healthchecks project or an Uptime Kuma backup (form, preview, confirm). The same
 * kv/ functions as api/ping_keys.ts and api/imports.ts; every POST answers 303.
 */
import { editService } from "../kv/service/rules.ts";
import { getService, pingKeyMade, rotatePingKey, rotatePush } from "../kv/service/commands.ts";
import { type ImportPlan, planImport, runImport } from "../kv/service/import.ts";
import type { Deps } from "../lib/deps.ts";
import { fail } from "../http/errors.ts";
import { emptyView, type FormView, readBody } from "./_form.tsx";
import { ErrorSummary, Field, TextArea } from "./_form_controls.tsx";
import { PostButton, UserText } from "./_layout.tsx";
import { Table } from "./_table.tsx";
import { MeNav, when } from "./_me.tsx";
import { putSessionFlash, readSessionFlash } from "./_session.ts";
import { formLimit, requireAccount, routeId, seeOther, type WebCtx, webRouter } from "./_web.tsx";

// ---- ping key -------------------------------------------------------------------------------

async function postPingKey(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const key = await rotatePingKey(deps, me.id);
  await putSessionFlash(deps, c, "ping-key", { key });
  return seeOther(c, "/me/ping-key");
}

/** The ping key once, after it was made, with the slug addresses it opens. */
async function getPingKey(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const shown = await readSessionFlash<{ key: string }>(deps, c, "ping-key");
  const made = await pingKeyMade(deps.kv, me.id);
  const endpoint = `${deps.config.baseUrl}/ping/`;
  c.header("Cache-Control", "no-store");
  return c.render(
    <>
      <MeNav here="/me/services" viewer={me} />
      <h1>Ping key</h1>
      {shown
        ? (
          <>
            <p>
              Your ping key, shown only now: every heartbeat answers{" "}
              <code>{endpoint}&lt;ping key&gt;/&lt;slug&gt;</code>. Any older key no longer works.
            </p>
            <p>
              <code class="secret">{shown.key}</code>
            </p>
            <p>
              Example: <code>{`${endpoint}${shown.key}/db-backup`}</code>; add{" "}
              <code>?create=1</code> to make a heartbeat on its first ping.
            </p>
          </>
        )
        : (
          <p>
            {made
              ? `Your account has a ping key, made ${when(made)}. It was shown for 15 minutes ` +
                "and is no longer kept; make a new one if you did not copy it."
              : "Your account has no ping key yet."}
          </p>
        )}
      <PingKeyButton made={made !== null} />
      <p>
        <a href="/me/services">All services</a>
      </p>
    </>,
    { title: "Ping key", noindex: true },
  );
}

function PingKeyButton({ made }: { made: boolean }) {
  return (
    <PostButton
      action="/me/ping-key"
      kind="secondary"
      confirm={made ? "The old ping key stops at once. Continue?" : undefined}
      block
    >
      {made ? "New ping key" : "Make a ping key"}
    </PostButton>
  );
}

// ---- a heartbeat's Healthchecks and Uptime Kuma addresses ------------------------------------

async function postMethods(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const id = routeId(c);
  const form = await readBody(c);
  await editService(deps, me, id, { methods: form.methods === "POST" ? "POST" : "" });
  return seeOther(c, `/me/services/${id}`);
}

async function postPush(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const id = routeId(c);
  const token = await rotatePush(deps, me.id, id);
  if (!token) fail(404, "no such service");
  await putSessionFlash(deps, c, `push:${id}`, { url: `${deps.config.baseUrl}/api/push/${token}` });
  return seeOther(c, `/me/services/${id}/push`);
}

/** The push address once, after it was made. */
async function getPush(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const id = routeId(c);
  const found = (await getService(deps.kv, me.id, id)).value;
  if (!found) fail(404, "no such service");
  const shown = await readSessionFlash<{ url: string }>(deps, c, `push:${id}`);
  c.header("Cache-Control", "no-store");
  return c.render(
    <>
      <MeNav here="/me/services" viewer={me} />
      <h1>
        Push address of <UserText>{found.name}</UserText>
      </h1>
      {shown
        ? (
          <>
            <p>Put this address in place of Uptime Kuma's; any older one no longer works:</p>
            <p>
              <code class="secret">{shown.url}?status=up&amp;msg=OK&amp;ping=</code>
            </p>
            <p>
              <code>status=down</code> is a failure with <code>msg</code> as its text;{" "}
              <code>ping</code> is kept as the response time.
            </p>
          </>
        )
        : (
          <p>
            The push address was shown for 15 minutes after it was made and is no longer kept. Make
            a new one on the service's page if you did not copy it.
          </p>
        )}
      <p>
        <a href={`/me/services/${id}`}>Go to the service</a>
      </p>
    </>,
    { title: "Push address", noindex: true },
  );
}

// ---- import ---------------------------------------------------------------------------------

const IMPORT_LABELS = { data: "Export (JSON)", file: "Or upload the file" };
/** Reasons kept for the preview at most: a large Kuma backup lists many it cannot take. */
const CANNOT_SHOWN = 50;

function ImportForm({ view }: { view: FormView }) {
  return (
    <form method="post" action="/me/services/import" enctype="multipart/form-data" novalidate>
      <ErrorSummary view={view} labels={IMPORT_LABELS} />
      <TextArea
        name="data"
        label={IMPORT_LABELS.data}
        view={view}
        rows={10}
        hint="Paste a Healthchecks project's GET /api/v3/checks/ answer, or an Uptime Kuma backup file."
      />
      <Field
        name="file"
        type="file"
        accept="application/json,.json"
        label={IMPORT_LABELS.file}
        view={view}
      />
      <button type="submit">Preview the import</button>
    </form>
  );
}

const importPage = (c: WebCtx, view: FormView) => {
  const me = requireAccount(c);
  return (
    <>
      <MeNav here="/me/services" viewer={me} />
      <h1>Bring your checks along</h1>
      <p>
        Heartbeats keep their Healthchecks UUID and slug, or their Uptime Kuma push token, so their
        ping addresses change only their base. You see what would be made before anything is.
      </p>
      <ImportForm view={view} />
      <p>
        <a href="/me/services">All services</a>
      </p>
    </>
  );
};

function getImport(_deps: Deps, c: WebCtx) {
  return c.render(importPage(c, emptyView()), { title: "Import", noindex: true });
}

async function postImport(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const body = await readBody(c);
  const file = body.file instanceof File && body.file.size > 0 ? body.file : null;
  const text = file ? await file.text() : typeof body.data === "string" ? body.data : "";
  const again = (field: string, message: string) => {
    c.status(400);
    c.header("Cache-Control", "no-store");
    const values = { data: typeof body.data === "string" ? body.data : "" };
    return c.render(importPage(c, { values, errors: { [field]: message } }), {
      title: "Import",
      noindex: true,
    });
  };
  if (text.trim() === "") return again("data", "Paste an export or choose its file.");
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return again(file ? "file" : "data", "This is not JSON: paste the export as it was saved.");
  }
  let plan: ImportPlan;
  try {
    plan = await planImport(deps, me, data);
  } catch (err) {
    const e = err as { kind?: string; message?: string };
    if (e.kind !== "invalid") throw err;
    return again(
      file ? "file" : "data",
      e.message!.replace(/^data: /, "").replace(/^n/, "N") + ".",
    );
  }
  const more = Math.max(0, plan.cannot.length - CANNOT_SHOWN);
  await putSessionFlash(deps, c, "import", {
    plan: { ...plan, cannot: plan.cannot.slice(0, CANNOT_SHOWN) },
    more,
  });
  return seeOther(c, "/me/services/import/preview");
}

interface KeptPlan {
  plan: ImportPlan;
  more: number;
}

async function getPreview(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const shown = await readSessionFlash<KeptPlan>(deps, c, "import");
  c.header("Cache-Control", "no-store");
  if (!shown) return seeOther(c, "/me/services/import");
  const { plan, more } = shown;
  const source = plan.source === "healthchecks" ? "Healthchecks project" : "Uptime Kuma backup";
  return c.render(
    <>
      <MeNav here="/me/services" viewer={me} />
      <h1>Import preview</h1>
      <p>From a {source}. Nothing is made until you confirm; then all of it at once.</p>
      <h2>Will be made ({plan.create.length})</h2>
      <Table
        rows={plan.create}
        empty={<p>Nothing in this export can be made here.</p>}
        columns={[
          { label: "Name", cell: (p) => <UserText>{p.input.name}</UserText> },
          {
            label: "Kind",
            cell: (p) => p.input.kind === "webhook" ? "heartbeat" : p.input.kind,
          },
          {
            label: "Notes",
            cell: (p) => <UserText>{p.notes.join("; ") || "as it was"}</UserText>,
          },
        ]}
      />
      <h2>Cannot be made ({plan.cannot.length + more})</h2>
      {plan.cannot.length > 0
        ? (
          <ul>
            {plan.cannot.map((x) => (
              <li>
                <UserText>{x.from}</UserText>: <UserText>{x.why}</UserText>
              </li>
            ))}
            {more > 0 ? <li>and {more} more</li> : null}
          </ul>
        )
        : <p>Everything can be made.</p>}
      {plan.create.length > 0
        ? (
          <PostButton action="/me/services/import/confirm" block>
            Import {plan.create.length} services
          </PostButton>
        )
        : null}
      <p>
        <a href="/me/services/import">Import another export</a> ·{" "}
        <a href="/me/services">All services</a>
      </p>
    </>,
    { title: "Import preview", noindex: true },
  );
}

async function postConfirm(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const shown = await readSessionFlash<KeptPlan>(deps, c, "import");
  if (!shown) return seeOther(c, "/me/services/import");
  await runImport(deps, me, shown.plan);
  await putSessionFlash(deps, c, "import", null);
  return seeOther(c, "/me/services");
}

export function compatPages(deps: Deps) {
  const app = webRouter();
  app.get("/me/ping-key", (c) => getPingKey(deps, c));
  app.post("/me/ping-key", (c) => postPingKey(deps, c));
  app.post("/me/services/:id{[0-9]{1,15}}/methods", (c) => postMethods(deps, c));
  app.post("/me/services/:id{[0-9]{1,15}}/push", (c) => postPush(deps, c));
  app.get("/me/services/:id{[0-9]{1,15}}/push", (c) => getPush(deps, c));
  app.get("/me/services/import", (c) => getImport(deps, c));
  // a Healthchecks project's or an Uptime Kuma backup's JSON, as the JSON API takes it.
  app.post("/me/services/import", formLimit(1024 * 1024), (c) => postImport(deps, c));
  app.get("/me/services/import/preview", (c) => getPreview(deps, c));
  app.post("/me/services/import/confirm", (c) => postConfirm(deps, c));
  return app;
}
