/**
 * The list of the owner's status pages (/me/status-pages), with the form that makes another page
 * at an address of its own.
 */
import { followerCount } from "../kv/status/followers.ts";
import { listStatusPages, MAX_PAGES, pageSlug } from "../kv/status/page.ts";
import type { Deps } from "../lib/deps.ts";
import { NewPageSettings } from "../http/status_inputs.ts";
import { emptyView, type FormView } from "./_form.tsx";
import { fields } from "./_form_controls.tsx";

import { UserText } from "./_layout.tsx";
import { Table } from "./_table.tsx";
import { MeNav } from "./_me.tsx";
import { requireAccount, SentAgain, type WebCtx } from "./_web.tsx";

const NEW_LABELS = { slug: "Address", title: "Title" };
export const NewPage = NewPageSettings.pick({ slug: true, title: true });

export async function listPage(deps: Deps, c: WebCtx, view: FormView = emptyView()) {
  const me = requireAccount(c);
  const pages = await listStatusPages(deps.kv, me.id);
  const F = fields(view, NEW_LABELS, NewPage);
  const counts = await Promise.all(pages.map((p) => followerCount(deps.kv, me.id, p.id)));
  return (
    <>
      <MeNav here="/me/services" viewer={me} />
      <h1>Status pages</h1>
      <SentAgain c={c} made="its page was made once" />
      <p>
        Each page shows the services you choose, in groups and in your order, at an address of its
        own, with a follow form. The first one lives at your account's address.
      </p>
      {pages.length
        ? (
          <Table
            caption="Your status pages"
            rows={pages}
            columns={[
              {
                label: "Page",
                cell: (p) => (
                  <a href={`/me/status-pages/${p.id}`}>
                    <UserText>{p.title || (p.id === 1 ? "First page" : p.slug)}</UserText>
                  </a>
                ),
              },
              {
                label: "Address",
                cell: (p) => <a href={`/status/${pageSlug(p, me)}`}>/status/{pageSlug(p, me)}</a>,
              },
              { label: "Published", cell: (p) => p.enabled ? "Yes" : "No (not found)" },
              { label: "Services", cell: (p) => p.services.length },
              { label: "Followers", cell: (_p, i) => counts[i] },
            ]}
          />
        )
        : (
          <p>
            No status page yet. <a href="/me/status-page">Set up the first one</a>{" "}
            at your account's address, or make one at an address of its own below.
          </p>
        )}
      <h2 id="new">Make another page</h2>
      {pages.length >= MAX_PAGES
        ? <p>You have {MAX_PAGES} pages, as many as an account may have.</p>
        : (
          <form method="post" action="/me/status-pages" novalidate>
            <F.Summary />
            <F.Field
              name="slug"
              required
              hint="The page is at /status/ followed by this: lower-case letters, digits and hyphens."
            />
            <F.Field name="title" hint="Empty: your account's name." />
            <button type="submit">Make the page</button>
          </form>
        )}
    </>
  );
}
