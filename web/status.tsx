/**
 * The public status page (/status/<slug>) and following it by mail: the follow form, the
 * mailed confirmation link (a page with a button: opening it confirms nothing), the unfollow
 * link of every mail (a page with a button). The same domain functions as /api/status/<slug>
 * and its follow, confirm and unfollow routes (kv/status/page.ts, kv/status/followers.ts).
 */
import { raw } from "hono/html";
import { FollowBody } from "../http/services_inputs.ts";
import { fail } from "../http/errors.ts";
import { clientOrigin, limit } from "../http/guards.ts";
import { confirmFollow, followLink } from "../kv/status/followers.ts";
import { requestFollow, unfollow } from "../kv/status/follows.ts";
import { RULES } from "../kv/store/rate_limit.ts";
import {
  openNotes,
  overallBanner,
  type PublicPage,
  type PublicService,
  publicStatusPage,
  statusIncidentFeed,
  statusVersion,
  visitorState,
} from "../kv/status/page.ts";
import { liveAnswer } from "./_live.ts";
import type { Deps } from "../lib/deps.ts";

import { noteWord } from "../mail/status.ts";
import { emptyView, type FormView, readForm, submitForm } from "./_form.tsx";
import { fields } from "./_form_controls.tsx";
import { PostButton, UserText } from "./_layout.tsx";
import { Ago } from "./_me.tsx";
import { seeOther, type WebCtx, webRouter } from "./_web.tsx";
import { StateIcon } from "./_state.tsx";
import { percentText, uptimeBars } from "../lib/svg.ts";
import { IncidentHistory, OpenIncidents } from "./_incidents.tsx";
const SLUG = ":slug{[a-z0-9-]{1,100}}";
const NOTICES: Record<string, string> = {
  sent: "If the address can receive mail, a confirmation link is on its way. Open it and " +
    "press the button to start following; it works for 7 days.",
  followed: "You follow this page now: a mail comes when a service here goes down or comes " +
    "back, and at each update of an incident. Every mail has a link to stop.",
};

/**
 * The owner's announcements (kv/status/notes.ts), newest first, each with its word and time;
 * numbered as an incident's updates are, the newest with the highest number.
 */
function Timeline(props: { notes: PublicPage["notes"]; now: number }) {
  return (
    <ol class="timeline" reversed>
      {props.notes.map((n) => (
        <li>
          <p>
            <Ago at={Date.parse(n.at)} now={props.now} />
            {n.kind === "note" ? null : (
              <>
                {" "}
                · <strong>{noteWord(n.kind)}</strong>
              </>
            )}
          </p>
          <p>
            <UserText>{n.text}</UserText>
          </p>
        </li>
      ))}
    </ol>
  );
}

const pageOf = async (deps: Deps, c: WebCtx) => {
  const page = await publicStatusPage(deps, c.req.param("slug")!);
  if (!page) fail(404, "no such status page");
  return page;
};

/**
 * The services of the page under their headings, in the owner's order: each heading where its
 * first service stands.
 */
function byGroup(services: PublicService[]): [string, PublicService[]][] {
  const groups = new Map<string, PublicService[]>();
  for (const s of services) groups.set(s.group, [...(groups.get(s.group) ?? []), s]);
  return [...groups];
}

/** A service in one or two lines: its name and state in words, uptime, the 90 days' bars. */
function ServiceRow({ s }: { s: PublicService }) {
  const state = visitorState(s);
  return (
    <li class={`svc svc-${state.tone} status-svc`}>
      <h3>
        <UserText>{s.name}</UserText>
      </h3>
      <p class={`tag state state-${state.tone}`}>
        <StateIcon state={state.tone} />
        <UserText>{state.text}</UserText>
      </p>
      {s.note
        ? (
          <p class="notice">
            <UserText>{s.note}</UserText>
          </p>
        )
        : null}
      <figure>{raw(uptimeBars(s.days))}</figure>
      <p class="uptime">
        90-day uptime: {s.uptime === null ? "no data yet" : percentText(s.uptime)}
      </p>
    </li>
  );
}

/** What live.js replaces when a state changes or an incident is posted. */
function StatusNow({ page, now }: { page: PublicPage; now: number }) {
  const banner = overallBanner(page.services);
  // The announcements still open stand on top; the rest below the incidents, each once.
  const open = openNotes(page.notes);
  const earlier = page.notes.filter((n) => !open.includes(n));
  const groups = byGroup(page.services);
  const many = groups.length > 1;
  const { list, names, explained } = page.cards;
  return (
    <div id="status-now" data-live-part="">
      <p class={`banner state state-${banner.tone}`} role="status">
        <StateIcon state={banner.tone} />
        {banner.text}
      </p>
      <OpenIncidents list={list} names={names} explained={(i) => explained.get(i.id)} />
      {open.length
        ? (
          <section aria-labelledby="open-h" class="open-note">
            <h2 id="open-h">Announcements</h2>
            <Timeline notes={open} now={now} />
          </section>
        )
        : null}
      {page.services.length ? null : <p>No services listed yet.</p>}
      {groups.map(([group, services]) => (
        <section aria-label={many ? undefined : "Services"}>
          {many
            ? (
              <h2>
                <UserText>{group}</UserText>
              </h2>
            )
            : null}
          <ul class="board">
            {services.map((s) => <ServiceRow s={s} />)}
          </ul>
        </section>
      ))}
      <p class="hint">
        Each bar is a day, the newest on the right. Green: never down that day; yellow: down for
        less than an hour; red: down for an hour or more; blue: all day in maintenance; grey: no
        data. Uptime is the time up over the time measured.
      </p>
      <IncidentHistory list={list} names={names} explained={(i) => explained.get(i.id)} />
      {earlier.length
        ? (
          <section aria-labelledby="notes-h">
            <h2 id="notes-h">Earlier announcements</h2>
            <Timeline notes={earlier} now={now} />
          </section>
        )
        : null}
    </div>
  );
}

const show = (deps: Deps, c: WebCtx, page: PublicPage, view: FormView = emptyView()) => {
  const slug = c.req.param("slug")!;
  const notice = NOTICES[c.req.query("follow") ?? ""];
  const F = fields(view, { email: "Your e-mail address" }, FollowBody);
  return (
    <>
      <h1>
        <UserText>{page.title}</UserText>
      </h1>
      {notice ? <p class="notice" role="status">{notice}</p> : null}
      <div data-live={`/status/${slug}/live`} data-version={page.version}>
        <StatusNow page={page} now={deps.clock.now()} />
      </div>
      <h2 id="follow">Follow by mail</h2>
      <p>
        Get a mail when a service on this page goes down or comes back, and at each update of an
        incident. Your address is used for nothing else; the owner sees how many follow, never who.
        Or read the incidents in a feed reader:{" "}
        <a href={`/status/${slug}/incidents.atom`}>incidents feed (Atom)</a>.
      </p>
      <form method="post" action={`/status/${slug}/follow`} novalidate>
        <F.Summary />
        <F.Field name="email" type="email" autocomplete="email" maxlength={320} required />
        <button type="submit">Follow this page</button>
      </form>
    </>
  );
};

/** The header of the page's own small site. */
const ownSite = (slug: string, page: PublicPage) => ({
  title: page.title,
  home: `/status/${slug}`,
  logo: page.logo,
  link: page.link,
});

const linkPage = (deps: Deps, purpose: "confirm" | "unfollow") => async (c: WebCtx) => {
  c.header("Cache-Control", "no-store");
  const token = c.req.query("token") ?? "";
  const found = await followLink(deps, token, purpose);
  if (!found) {
    c.status(410);
    return c.render(
      <>
        <h1>This link does not work any more</h1>
        <p>
          {purpose === "confirm"
            ? "A confirmation link works once, for 7 days; a newer one replaces it. Follow the page again to get a new link."
            : "This unfollow link has expired; use the link of a newer mail."}
        </p>
        <p>
          <a href="/">Home</a>
        </p>
      </>,
      { title: "Link used or expired", noindex: true },
    );
  }
  const confirm = purpose === "confirm";
  return c.render(
    <>
      <h1>{confirm ? "Confirm following" : "Stop following"}</h1>
      <p>
        {confirm ? "Follow" : "Stop following"} the status page{" "}
        <a href={`/status/${found.slug}`}>
          <UserText>{found.title}</UserText>
        </a>{" "}
        by mail{confirm ? "" : ": your address is deleted"}.
      </p>
      <PostButton action={`/status/${found.slug}/${purpose}`} fields={{ token }} block>
        {confirm ? "Confirm following" : "Stop following"}
      </PostButton>
      <p class="hint">
        {confirm
          ? "Did not ask for this? Close this page: nothing happens without the button."
          : "Changed your mind? Close this page: you keep following."}
      </p>
    </>,
    { title: confirm ? "Confirm following" : "Stop following", noindex: true },
  );
};

const tokenOf = async (c: WebCtx) => {
  const token = (await readForm(c)).token ?? "";
  if (!token || token.length > 200) fail(400, "the link is incomplete; open it from your mail");
  return token;
};

export function statusPages(deps: Deps) {
  const app = webRouter();

  app.get(`/status/${SLUG}`, async (c) => {
    const page = await pageOf(deps, c);
    // Shared caches may keep it a minute (a busy page during an outage); a browser asks again,
    // so the owner sees a note they just posted.
    c.header(
      "Cache-Control",
      c.req.query("follow") ? "no-store" : "public, max-age=0, s-maxage=60, must-revalidate",
    );
    return c.render(show(deps, c, page), {
      title: `${page.title}: status`,
      description: `Service status of ${page.owner}`,
      canonical: `/status/${c.req.param("slug")!}`,
      own: ownSite(c.req.param("slug")!, page),
      feed: { href: `/status/${c.req.param("slug")!}/incidents.atom`, title: "Incidents" },
      scripts: ["live.js"],
    });
  });

  /** The page's incidents as an Atom feed, newest first. */
  app.get(`/status/${SLUG}/incidents.atom`, async (c) => {
    const feed = await statusIncidentFeed(deps, c.req.param("slug")!);
    if (feed === null) fail(404, "no such status page");
    c.header("Content-Type", "application/atom+xml; charset=utf-8");
    c.header("Cache-Control", "public, max-age=0, s-maxage=60, must-revalidate");
    return c.body(feed);
  });

  /** The page's live stream: its version now, then at each change (web/static/live.js). */
  /** The page's version for its live updates (web/_live.ts). */
  app.get(`/status/${SLUG}/live`, (c) => {
    const slug = c.req.param("slug")!;
    return liveAnswer(c, () => statusVersion(deps, slug), true);
  });

  app.post(`/status/${SLUG}/follow`, async (c) => {
    const slug = c.req.param("slug")!;
    return await submitForm(c, {
      schema: FollowBody,
      act: async ({ email }) => {
        await limit(deps, RULES.followByOrigin, clientOrigin(deps, c));
        await limit(deps, RULES.followByAddress, email);
        await requestFollow(deps, slug, email);
        return `/status/${slug}?follow=sent`;
      },
      limitField: "email",
      show: async (view) => show(deps, c, await pageOf(deps, c), view),
      page: { title: "Follow a status page" },
    });
  });

  /** The page of a mailed link: what it is about and one button; a GET changes nothing. */
  app.get(`/status/${SLUG}/confirm`, linkPage(deps, "confirm"));
  app.post(`/status/${SLUG}/confirm`, async (c) => {
    const { slug } = await confirmFollow(deps, await tokenOf(c));
    return seeOther(c, `/status/${slug}?follow=followed`);
  });

  app.get(`/status/${SLUG}/unfollow`, linkPage(deps, "unfollow"));
  app.post(`/status/${SLUG}/unfollow`, async (c) => {
    const { slug } = await unfollow(deps, await tokenOf(c));
    return seeOther(c, `/status/${slug}/unfollowed`);
  });

  app.get(`/status/${SLUG}/unfollowed`, (c) => {
    const slug = c.req.param("slug")!;
    return c.render(
      <>
        <h1>You no longer follow this page</h1>
        <p>Your address is deleted: no more mail comes from this status page.</p>
        <p>
          <a href={`/status/${slug}`}>Back to the status page</a> · <a href="/">Home</a>
        </p>
      </>,
      { title: "Unfollowed", noindex: true },
    );
  });

  return app;
}
