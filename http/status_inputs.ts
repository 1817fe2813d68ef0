import { z } from "zod";
import { MAX_NOTE } from "../kv/status/page.ts";
import { MAX_PAGES, PAGE_SLUG_RE } from "../kv/status/settings.ts";
import { StatusLink } from "./services_inputs.ts";
import { multiLine, oneLineField } from "./text.ts";

/**
 * The settings of a status page, validated by /api/me/status-page, /api/me/status-pages
 * (api/status.ts) and the settings pages (web/me_status_pages.tsx) alike.
 */

export const MAX_PAGE_GROUP = 40;

export const PageSettings = z.object({
  enabled: z.boolean(),
  title: oneLineField(80).default(""),
  services: z.array(z.object({
    id: z.number().int().positive(),
    note: multiLine(MAX_NOTE).default("").meta({
      description: "An incident or maintenance text shown with the service",
    }),
    group: oneLineField(MAX_PAGE_GROUP).default("").meta({
      description: "The heading it stands under on this page; empty: the service's own group",
    }),
  })).max(30).default([]).meta({
    description: "The services shown, in this order; groups stand in the order of their " +
      "first service",
  }),
  link: StatusLink.default(""),
  logo: z.boolean().default(false).meta({
    description: "Show the owner's profile picture as the page's logo",
  }),
}).meta({ id: "StatusPageSettings" });

export const PageSlug = z.string().trim().toLowerCase().max(60).regex(PAGE_SLUG_RE, {
  error: "1 to 60 lower-case letters, digits and hyphens, starting and ending with a letter " +
    "or digit",
}).meta({ description: "The page's address: /status/<slug>", example: "riverside-school" });

/** Another page of the account: the same settings and an address of its own. */
export const NewPageSettings = PageSettings.extend({ slug: PageSlug }).meta({
  id: "StatusPageInput",
  description: `A page with an address of its own (at most ${MAX_PAGES} an account)`,
});
