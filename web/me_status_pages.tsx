/**
 * The owner's status pages: the list (/me/status-pages) with the form that makes another page
 * at an address of its own, and each page's settings (/me/status-pages/<id>; the first page
 * also at /me/status-page, with the account's incident notes): publish, address, title, link,
 * logo, and the services shown with their note, the heading they stand under and their place.
 * A refused form comes back with every value as typed and each message beside its field; a
 * saved one says what was stored. The same domain functions as /api/me/status-pages and
 * /api/me/status-page (kv/status/page.ts, kv/status/settings.ts, kv/status/notes.ts).
 * This file holds the routes; the list is web/_me_status_page_list.tsx, a page's settings
 * web/_me_status_page_settings.tsx, the announcements web/_me_status_page_notes.tsx.
 */
import { createStatusPage, deleteStatusPage } from "../kv/status/page.ts";
import { deleteNote, postNote } from "../kv/status/notes.ts";
import type { Deps } from "../lib/deps.ts";
import { fail } from "../http/errors.ts";
import { NoteBody } from "../http/services_inputs.ts";
import { submitForm } from "./_form.tsx";
import { formToken } from "../kv/store/form_tokens.ts";
import { HOUR } from "../lib/clock.ts";
import { DomainError } from "../lib/errors.ts";
import { formLimit, requireAccount, routeId, seeOther, webRouter } from "./_web.tsx";
import { listPage, NewPage } from "./_me_status_page_list.tsx";
import { renderStatusSettings, saveFromForm, settingsPage } from "./_me_status_page_settings.tsx";

export function statusSettingsPages(deps: Deps) {
  const app = webRouter();

  app.get("/me/status-pages", async (c) => await renderStatusSettings(c, listPage(deps, c)));

  app.post("/me/status-pages", async (c) => {
    const me = requireAccount(c);
    return await submitForm(c, {
      schema: NewPage,
      act: async ({ slug, title }) => {
        // The same form sent again (Back and submit, a double click) makes no second page.
        const form = { token: formToken(me.id, "status-page", { slug, title }), life: HOUR };
        try {
          const page = await createStatusPage(deps, me.id, {
            slug,
            title,
            enabled: false,
            services: [],
          }, form);
          return `/me/status-pages/${page.id}?saved=1`;
        } catch (err) {
          if (err instanceof DomainError && err.extra.repeated) {
            return "/me/status-pages?sent=again";
          }
          throw err;
        }
      },
      show: (view) => listPage(deps, c, view),
      page: { title: "Status pages" },
    });
  });

  app.get(
    "/me/status-pages/:id{[0-9]{1,6}}",
    async (c) => await renderStatusSettings(c, settingsPage(deps, c, routeId(c), false)),
  );

  // A note of 200 characters for each of 30 services.
  app.post(
    "/me/status-pages/:id{[0-9]{1,6}}",
    formLimit(128 * 1024),
    async (c) => await saveFromForm(deps, c, routeId(c), false),
  );

  app.post("/me/status-pages/:id{[0-9]{1,6}}/delete", async (c) => {
    const me = requireAccount(c);
    await deleteStatusPage(deps, me.id, routeId(c));
    return seeOther(c, "/me/status-pages");
  });

  // ---- the first page at its first address, with the account's incident notes ----

  app.get(
    "/me/status-page",
    async (c) => await renderStatusSettings(c, settingsPage(deps, c, 1, true)),
  );

  app.post(
    "/me/status-page",
    formLimit(128 * 1024),
    async (c) => await saveFromForm(deps, c, 1, true),
  );

  app.post("/me/status-page/notes", async (c) => {
    const me = requireAccount(c);
    return await submitForm(c, {
      schema: NoteBody,
      act: async (input) => {
        await postNote(deps, me.id, input);
        return "/me/status-page?posted=1#notes";
      },
      show: (view) => settingsPage(deps, c, 1, true, undefined, view),
      page: { title: "Status page" },
    });
  });

  app.post("/me/status-page/notes/:id{[0-9]{1,15}}/delete", async (c) => {
    const me = requireAccount(c);
    const id = routeId(c);
    if (!await deleteNote(deps.kv, me.id, id)) fail(404, "no such note");
    return seeOther(c, "/me/status-page#notes");
  });

  return app;
}
