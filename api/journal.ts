import { z } from "zod";
import { EntryPatch, NewEntry } from "../http/account_inputs.ts";
import {
  addEntry,
  deleteEntry,
  type JournalEntry,
  listEntries,
  updateEntry,
} from "../kv/accounts/journal.ts";
import { iso, isoOrNull } from "../lib/clock.ts";
import type { Deps } from "../lib/deps.ts";
import { fail } from "../http/errors.ts";
import { body, errors, idParam, jsonResponse, router } from "../http/router.ts";
import { guarded } from "../http/guards.ts";

const Entry = z.object({
  id: z.number().int(),
  text: z.string(),
  public: z.boolean(),
  created: z.string(),
  updated: z.string().nullable(),
}).meta({ id: "JournalEntry" });

const entryView = (e: JournalEntry) => ({
  id: e.id,
  text: e.text,
  public: e.public,
  created: iso(e.created),
  updated: isoOrNull(e.updated),
});

/**
 * Answer of POST and PATCH: `{ok, item}` like every other write (docs/api.md "Resources, times and text") ("answers 201 with
 * item"), with the entry's fields repeated at the top level for clients that read them there.
 */
const EntryAnswer = Entry.extend({ ok: z.literal(true), item: Entry }).meta({
  id: "JournalAnswer",
});
const entryAnswer = (e: JournalEntry) => {
  const item = entryView(e);
  return { ok: true as const, item, ...item };
};

export function journalRoutes(deps: Deps) {
  const app = router();
  const { bearer } = guarded(deps);
  const param = { params: z.object({ id: idParam }) };

  app.openapi(
    bearer({
      method: "get",
      path: "/me/journal",
      tags: ["journal"],
      summary: "The account's journal, newest first",
      responses: { 200: jsonResponse(z.object({ items: z.array(Entry) })), ...errors(401) },
    }),
    async (c) => {
      const items = (await listEntries(deps.kv, c.get("account").id)).map(entryView);
      return c.json({ items }, 200);
    },
  );

  app.openapi(
    bearer({
      method: "post",
      path: "/me/journal",
      tags: ["journal"],
      summary: "Write an entry (public unless public: false); 60 an hour",
      request: body(NewEntry),
      responses: { 201: jsonResponse(EntryAnswer, "Created"), ...errors(400, 401, 429) },
    }),
    async (c) => {
      const input = c.req.valid("json");
      const account = c.get("account").id;
      const e = await addEntry(deps.kv, account, input, deps.clock.now());
      return c.json(entryAnswer(e), 201);
    },
  );

  app.openapi(
    bearer({
      method: "patch",
      path: "/me/journal/{id}",
      tags: ["journal"],
      summary: "Change an entry's text and/or visibility",
      request: { ...param, ...body(EntryPatch) },
      responses: { 200: jsonResponse(EntryAnswer), ...errors(400, 401, 404) },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const patch = c.req.valid("json");
      const e = await updateEntry(deps.kv, c.get("account").id, id, patch, deps.clock.now());
      if (!e) fail(404, "no such journal entry");
      return c.json(entryAnswer(e), 200);
    },
  );

  app.openapi(
    bearer({
      method: "delete",
      path: "/me/journal/{id}",
      tags: ["journal"],
      summary: "Delete an entry",
      request: param,
      responses: { 200: jsonResponse(z.object({ ok: z.literal(true) })), ...errors(401, 404) },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      if (!await deleteEntry(deps.kv, c.get("account").id, id)) fail(404, "no such journal entry");
      return c.json({ ok: true as const }, 200);
    },
  );

  return app;
}
