/**
 * API keys of the Healthchecks-compatible API (/me/api-keys): the list, a form that makes a key
 * (shown once, after the redirect, from this session's flash) and a revoke button each. The
 * same domain functions as /api/me/api-keys (kv/service/api_keys.ts).
 */
import {
  apiKeyView,
  createApiKey,
  listApiKeys,
  MAX_API_KEYS,
  revokeApiKey,
} from "../kv/service/api_keys.ts";
import type { Deps } from "../lib/deps.ts";
import { ApiKeyInput } from "../http/account_inputs.ts";
import { fail } from "../http/errors.ts";
import { emptyView, type FormView, submitForm } from "./_form.tsx";
import { Checkbox, ErrorSummary, Field } from "./_form_controls.tsx";
import { CopyField, PostButton, UserText } from "./_layout.tsx";
import { Table } from "./_table.tsx";
import { MeNav, when } from "./_me.tsx";
import { requireAccount, routeId, seeOther, type WebCtx, webRouter } from "./_web.tsx";
import { putSessionFlash, readSessionFlash } from "./_session.ts";

const KEY_FLASH = "api_key";
const LABELS = { name: "Key name", readonly: "Read-only key" };
type Shown = { name: string; key: string; readonly: boolean };

const keysPage = async (deps: Deps, c: WebCtx, view: FormView = emptyView(), shown?: Shown) => {
  const me = requireAccount(c);
  const items = (await listApiKeys(deps.kv, me.id)).map(apiKeyView);
  const base = deps.config.baseUrl;
  return (
    <>
      <MeNav here="/me/services" viewer={me} />
      <h1>API keys</h1>
      <p>
        Tools made for Healthchecks (its Terraform and Ansible modules, runitor, its Python, Go and
        JavaScript clients) manage your heartbeats here with one changed address: use{" "}
        <code>{base}/api/v3/</code>{" "}
        as the API address and a key from this page. A read-only key lists and reads checks only.
      </p>
      {shown
        ? (
          <div class="notice" role="status">
            <p>
              Key <UserText>{shown.name || "(no name)"}</UserText>{" "}
              made{shown.readonly ? " (read-only)" : ""}. It is shown on this page for 15 minutes
              and never again.
            </p>
            <CopyField id="api-key" label="API key" value={shown.key} />
          </div>
        )
        : null}
      <Table
        caption="Your API keys"
        rows={items}
        empty={<p>No API keys yet.</p>}
        columns={[
          { label: "Name", cell: (k) => <UserText>{k.name || "(no name)"}</UserText> },
          { label: "Access", cell: (k) => k.readonly ? "Read-only" : "Read and write" },
          { label: "Begins with", cell: (k) => <code>{k.prefix}</code> },
          { label: "Made", cell: (k) => when(Date.parse(k.created)) },
          {
            label: "Actions",
            cell: (k) => (
              <PostButton
                action={`/me/api-keys/${k.id}/revoke`}
                kind="danger"
                confirm="Revoke this key? Tools using it stop at once."
              >
                Revoke key
              </PostButton>
            ),
          },
        ]}
      />
      <h2>Make a key</h2>
      <form method="post" action="/me/api-keys" novalidate>
        <ErrorSummary view={view} labels={LABELS} />
        <Field name="name" label={LABELS.name} view={view} maxlength={80} hint="Optional" />
        <Checkbox name="readonly" label={LABELS.readonly} view={view} />
        <button type="submit">Make key</button>
      </form>
      <p class="hint">Up to {MAX_API_KEYS} keys.</p>
      <p>
        <a href="/me/services">All services</a>
      </p>
    </>
  );
};

async function getMeApiKeys(deps: Deps, c: WebCtx) {
  requireAccount(c);
  const shown = c.req.query("shown") === "1"
    ? await readSessionFlash<Shown>(deps, c, KEY_FLASH)
    : null;
  c.header("Cache-Control", "no-store");
  return c.render(await keysPage(deps, c, emptyView(), shown ?? undefined), {
    title: "API keys",
    noindex: true,
  });
}

async function postMeApiKeys(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  let made: Shown | null = null;
  const res = await submitForm(c, {
    schema: ApiKeyInput,
    input: (f) => ({ name: f.name ?? "", readonly: f.readonly === "on" }),
    act: async (input) => {
      const k = await createApiKey(deps, me.id, input);
      made = { name: k.item.name, key: k.key, readonly: k.item.readonly };
      return "/me/api-keys";
    },
    show: (view) => keysPage(deps, c, view),
    page: { title: "API keys" },
  });
  if (!made) return res;
  // The key is shown after the redirect, from this session's flash.
  await putSessionFlash(deps, c, KEY_FLASH, made);
  return seeOther(c, "/me/api-keys?shown=1");
}

async function postMeApiKeysRevoke(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  if (!await revokeApiKey(deps, me.id, routeId(c))) fail(404, "no such API key");
  return seeOther(c, "/me/api-keys");
}

export function apiKeyPages(deps: Deps) {
  const app = webRouter();
  app.get("/me/api-keys", (c) => getMeApiKeys(deps, c));
  app.post("/me/api-keys", (c) => postMeApiKeys(deps, c));
  app.post("/me/api-keys/:id{[0-9]{1,15}}/revoke", (c) => postMeApiKeysRevoke(deps, c));
  return app;
}
