/**
 * Public pages that are not the catalogue: public profiles (/people/<slug>), search results
 * (/search), a proposal's status page (/contribute/status, its `status_url`), and the files
 * for search engines (/sitemap.xml, /robots.txt).
 */
import { accountKey, getAccount, slugKey } from "../kv/accounts/accounts.ts";
import {
  getProposal,
  keyMatches,
  proposalsOf,
  publicStatusView,
} from "../kv/catalogue/proposals.ts";
import { RULES } from "../kv/store/rate_limit.ts";
import { search } from "../kv/search/search.ts";
import { isoDate } from "../lib/clock.ts";
import type { Deps } from "../lib/deps.ts";
import { displayText } from "../lib/display.ts";
import { fail } from "../http/errors.ts";
import { clientOrigin, limit } from "../http/guards.ts";
import { publicProfile } from "../kv/accounts/profile.ts";
import { catalogue } from "./_catalogue.ts";
import { UserText } from "./_layout.tsx";
import { standingName, when } from "./_me.tsx";
import { Table } from "./_table.tsx";
import { STATUS_NAMES, STATUS_WORDS } from "./_proposal.tsx";
import { viewer, type WebCtx, webRouter } from "./_web.tsx";

const SLUG = /^[a-z0-9-]{1,80}$/;

type PublicProfile = Awaited<ReturnType<typeof publicProfile>>;
type Found = Awaited<ReturnType<typeof search>>;
type Person = (id: number, name: string) => unknown;

async function getPeopleSlug(deps: Deps, c: WebCtx) {
  const slug = c.req.param("slug")!;
  const idx = SLUG.test(slug) ? await deps.kv.get<number>(slugKey(slug)) : null;
  const a = idx?.value == null ? null : (await getAccount(deps.kv, idx.value)).value;
  if (!a || !a.name || a.slug !== slug) fail(404, "There is no public profile at this address.");
  const p = await publicProfile(deps, a);
  const pr = p.profile;
  return c.render(
    <>
      <h1>
        <UserText>{p.name}</UserText>
      </h1>
      {p.avatar ? <img class="avatar" src={p.avatar} alt="" width="96" height="96" /> : null}
      <ProfileFacts p={p} />
      {pr.about
        ? (
          <p>
            <UserText>{pr.about}</UserText>
          </p>
        )
        : null}
      {pr.bio
        ? (
          <>
            <h2>Biography</h2>
            <Paragraphs text={pr.bio} />
          </>
        )
        : null}
      <h2>Modules</h2>
      {p.modules.length
        ? (
          <ul>
            {p.modules.map((m) => (
              <li>
                <a href={`/modules/${m.slug}`}>
                  <UserText>{m.title}</UserText>
                </a>
              </li>
            ))}
          </ul>
        )
        : <p>None yet.</p>}
      <h2>Journal</h2>
      <ProfileJournal entries={p.journal} />
    </>,
    { title: displayText(p.name), canonical: `/people/${slug}` },
  );
}

/** One term of a profile's list, left out when it has no value. */
function Fact({ term, show, children }: { term: string; show: unknown; children?: unknown }) {
  return show
    ? (
      <>
        <dt>{term}</dt>
        <dd>{children}</dd>
      </>
    )
    : null;
}

function ProfileFacts({ p }: { p: PublicProfile }) {
  const pr = p.profile;
  return (
    <dl>
      <dt>Standing</dt>
      <dd>{standingName(p.standing)}</dd>
      <dt>Member since</dt>
      <dd>{p.since}</dd>
      <Fact term="Organisation" show={pr.org}>
        <UserText>{pr.org}</UserText>
      </Fact>
      <Fact term="Role" show={pr.role}>
        <UserText>{pr.role}</UserText>
      </Fact>
      <Fact term="Place" show={pr.place}>
        <UserText>{pr.place}</UserText>
      </Fact>
      <Fact term="Languages" show={pr.langs.length}>{pr.langs.join(", ")}</Fact>
      <Fact term="Website" show={pr.website}>
        <a href={pr.website} rel="nofollow ugc noopener">
          <UserText>{pr.website}</UserText>
        </a>
      </Fact>
      <Fact term="Contact" show={p.contact}>
        <a href={`mailto:${p.contact}`}>
          <UserText>{p.contact}</UserText>
        </a>
      </Fact>
    </dl>
  );
}

/** A text's paragraphs (separated by blank lines), each a `<p>`. */
function Paragraphs({ text }: { text: string }) {
  return (
    <>
      {text.split(/\n{2,}/).map((para) => (
        <p>
          <UserText>{para}</UserText>
        </p>
      ))}
    </>
  );
}

function ProfileJournal({ entries }: { entries: PublicProfile["journal"] }) {
  return entries.length
    ? (
      <ul class="journal">
        {entries.map((e) => (
          <li>
            <p class="meta">
              <time datetime={e.created}>{e.created.slice(0, 10)}</time>
              {e.updated ? ` (edited ${e.updated.slice(0, 10)})` : ""}
            </p>
            <Paragraphs text={e.text} />
          </li>
        ))}
      </ul>
    )
    : <p>No public entries.</p>;
}

async function getSearch(deps: Deps, c: WebCtx) {
  const q = (c.req.query("q") ?? "").trim().slice(0, 200);
  if (q.length < 2) {
    return c.render(
      <>
        <h1>Search</h1>
        <SearchPurpose />
        <SearchForm q={q} />
        {q ? <p class="error">Type at least 2 characters.</p> : null}
      </>,
      { title: "Search", noindex: true },
    );
  }
  await limit(deps, RULES.search, clientOrigin(deps, c));
  const found = await search(deps, q);
  const slugs = await slugsOf(deps, [
    ...found.people.map((p) => p.id),
    ...found.journal.map((j) => j.actor_id),
  ]);
  const person = (id: number, name: string) =>
    slugs.get(id)
      ? (
        <a href={`/people/${slugs.get(id)}`}>
          <UserText>{name}</UserText>
        </a>
      )
      : <UserText>{name}</UserText>;
  const total = found.people.length + found.journal.length + found.modules.length;
  c.header("Cache-Control", "no-store");
  return c.render(
    <>
      <h1>Search</h1>
      <SearchForm q={q} />
      <p role="status">{total} result{total === 1 ? "" : "s"}.</p>
      {found.suggestion
        ? (
          <p class="didyoumean">
            Did you mean{" "}
            <a href={`/search?q=${encodeURIComponent(found.suggestion)}`}>
              <UserText>{found.suggestion}</UserText>
            </a>?
          </p>
        )
        : null}
      <h2>Modules</h2>
      <FoundModules modules={found.modules} />
      <h2>People</h2>
      <FoundPeople people={found.people} person={person} />
      <h2>Journal</h2>
      <FoundJournal journal={found.journal} person={person} />
    </>,
    { title: `Search: ${displayText(q)}`, noindex: true },
  );
}

function SearchForm({ q }: { q: string }) {
  return (
    <form method="get" action="/search" role="search" class="search">
      <label for="search-q">Search modules, people and journals</label>
      <input id="search-q" type="search" name="q" value={q} maxlength={200} />
      <button type="submit">Search</button>
    </form>
  );
}

function FoundModules({ modules }: { modules: Found["modules"] }) {
  return modules.length
    ? (
      <ul>
        {modules.map((m) => (
          <li>
            <a href={`/modules/${m.slug}`}>
              <UserText>{m.title}</UserText>
            </a>{" "}
            <span class="meta">
              by <UserText>{m.name}</UserText>
            </span>
            <br />
            <span class="snippet">
              <UserText>{m.snippet}</UserText>
            </span>
          </li>
        ))}
      </ul>
    )
    : <p>No modules found.</p>;
}

function FoundPeople({ people, person }: { people: Found["people"]; person: Person }) {
  return people.length
    ? (
      <ul>
        {people.map((p) => (
          <li>
            {person(p.id, p.name)}
            {p.org || p.role
              ? (
                <span class="meta">
                  {" "}
                  <UserText>{[p.role, p.org].filter(Boolean).join(", ")}</UserText>
                </span>
              )
              : null}
          </li>
        ))}
      </ul>
    )
    : <p>No people found.</p>;
}

function FoundJournal({ journal, person }: { journal: Found["journal"]; person: Person }) {
  return journal.length
    ? (
      <ul>
        {journal.map((j) => (
          <li>
            <p class="meta">
              {person(j.actor_id, j.name)}, {isoDate(j.created)}
            </p>
            <p>
              <UserText>{j.text}</UserText>
            </p>
          </li>
        ))}
      </ul>
    )
    : <p>No journal entries found.</p>;
}

async function getContributeStatus(deps: Deps, c: WebCtx) {
  c.header("Cache-Control", "no-store");
  const raw = c.req.query("id") ?? "";
  const id = /^[1-9][0-9]{0,15}$/.test(raw) ? Number(raw) : null;
  const p = id === null ? null : (await getProposal(deps.kv, id)).value;
  if (!p) {
    fail(
      404,
      "No proposal has this number. Unconfirmed proposals are deleted after seven days.",
    );
  }
  // The mailed secret, or the submitter signed in with the proposal's address, shows details.
  const own = Boolean(p.email) && viewer(c)?.email === p.email;
  const v = publicStatusView(p, own || await keyMatches(p, c.req.query("key")));
  const withReasons = v.history[0] !== undefined && "reason" in v.history[0];
  return c.render(
    <>
      <h1>Proposal {v.id}: {STATUS_NAMES[p.status]}</h1>
      <p class="lede">{STATUS_WORDS[p.status]}.</p>
      {v.title !== undefined
        ? (
          <>
            <p>
              <strong>
                <UserText>{v.title}</UserText>
              </strong>{" "}
              (<UserText>{v.area ?? ""}</UserText>), under the name{" "}
              <UserText>{v.name ?? ""}</UserText>.
            </p>
            {v.module_url
              ? (
                <p>
                  Published: <a href={v.module_url}>{`${deps.config.baseUrl}${v.module_url}`}</a>
                </p>
              )
              : null}
          </>
        )
        : <p>Open the link from your mail to see the details.</p>}
      <p>
        Sent {when(p.created)}, last change {when(p.updated)}.
      </p>
      <Table
        rows={v.history}
        columns={[
          { label: "When", cell: (_h, i) => when(p.decisions[i].at) },
          { label: "Status", cell: (h) => STATUS_WORDS[h.status] },
          withReasons
            ? {
              label: "Reason",
              cell: (h) => <UserText>{(h as { reason?: string | null }).reason ?? ""}</UserText>,
            }
            : null,
        ]}
      />
    </>,
    { title: `Proposal ${v.id}`, noindex: true },
  );
}

/**
 * Where a confirmation link lands once pressed (web/sign_in.tsx): the proposals it confirmed,
 * by title, for the signed-in submitter only, and whether the link made their account.
 */
async function getContributeConfirmed(deps: Deps, c: WebCtx) {
  c.header("Cache-Control", "no-store");
  const me = viewer(c);
  const ids = new Set(
    (c.req.query("ids") ?? "").split(",").filter((s) => /^[1-9][0-9]{0,15}$/.test(s)).map(Number),
  );
  const mine = me ? (await proposalsOf(deps.kv, me.email)).filter((p) => ids.has(p.id)) : [];
  if (!me || mine.length === 0) {
    fail(404, "Nothing to show here: open the link from your mail again, or sign in.");
  }
  const made = c.req.query("account") === "new";
  return c.render(
    <>
      <h1>{mine.length === 1 ? "Your proposal is confirmed" : "Your proposals are confirmed"}</h1>
      {mine.map((p) => (
        <p class="notice" role="status">
          Your proposal ‘<UserText>{p.title}</UserText>’ is confirmed; the team has been told.{" "}
          <a href={`/contribute/status?id=${p.id}`}>Its status page</a>
        </p>
      ))}
      {made
        ? (
          <p>
            Confirming it made an account for{" "}
            <strong>
              <UserText>{me.email}</UserText>
            </strong>, and this browser is signed in to it: the module will be published under it,
            and <a href="/me/work">Your work</a>{" "}
            shows your proposals. There is no password: next time, ask for a sign-in link.
          </p>
        )
        : (
          <p>
            You are signed in as{" "}
            <strong>
              <UserText>{me.email}</UserText>
            </strong>; <a href="/me/work">Your work</a> shows your proposals.
          </p>
        )}
      <ul class="actions">
        <li>
          <a href="/catalogue">Browse the catalogue</a>
        </li>
      </ul>
    </>,
    { title: "Proposal confirmed", noindex: true },
  );
}

function getRobotsTxt(deps: Deps, c: WebCtx) {
  c.header("Content-Type", "text/plain; charset=utf-8");
  return c.body(
    "User-agent: *\nDisallow: /me\nDisallow: /team\nDisallow: /sign-in\nDisallow: /search\n" +
      "Disallow: /contribute/status\nDisallow: /api/\n" +
      `Sitemap: ${deps.config.baseUrl}/sitemap.xml\n`,
  );
}

async function getSitemapXml(deps: Deps, c: WebCtx) {
  const cat = await catalogue(deps);
  const people = new Set<number>(cat.p.modules.flatMap((m) => m.contributors));
  const slugs = await slugsOf(deps, [...people]);
  const base = deps.config.baseUrl;
  const esc = (s: string) => s.replace(/[<>&'"]/g, (ch) => `&#${ch.charCodeAt(0)};`);
  const urls = [
    `<url><loc>${esc(base)}/</loc></url>`,
    `<url><loc>${esc(base)}/catalogue</loc></url>`,
    `<url><loc>${esc(base)}/request</loc></url>`,
    `<url><loc>${esc(base)}/contribute</loc></url>`,
    `<url><loc>${esc(base)}/api-reference</loc></url>`,
    ...cat.p.modules.map((m) =>
      `<url><loc>${esc(`${base}/modules/${m.slug}`)}</loc><lastmod>${
        isoDate(m.updated)
      }</lastmod></url>`
    ),
    ...[...slugs.values()].map((s) => `<url><loc>${esc(`${base}/people/${s}`)}</loc></url>`),
  ];
  c.header("Content-Type", "application/xml; charset=utf-8");
  return c.body(
    `<?xml version="1.0" encoding="UTF-8"?>\n` +
      `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${
        urls.join("\n")
      }\n</urlset>\n`,
  );
}

export function publicPages(deps: Deps) {
  const app = webRouter();

  app.get("/people/:slug", (c) => getPeopleSlug(deps, c));

  app.get("/search", (c) => getSearch(deps, c));

  // The page a proposal's status_url opens: without the mailed secret (`key`) the state and
  // dates only, never the submitter's address, name or text.
  app.get("/contribute/status", (c) => getContributeStatus(deps, c));

  app.get("/contribute/confirmed", (c) => getContributeConfirmed(deps, c));

  app.get("/robots.txt", (c) => getRobotsTxt(deps, c));

  app.get("/sitemap.xml", (c) => getSitemapXml(deps, c));

  return app;
}

/** Profile paths of named accounts, by id. */
async function slugsOf(deps: Deps, ids: number[]): Promise<Map<number, string>> {
  const unique = [...new Set(ids)];
  const out = new Map<number, string>();
  for (let i = 0; i < unique.length; i += 10) {
    const got = await deps.kv.getMany<{ name: string; slug: string }[]>(
      unique.slice(i, i + 10).map(accountKey),
    );
    got.forEach((e, j) => {
      if (e.value?.name && e.value.slug) out.set(unique[i + j], e.value.slug);
    });
  }
  return out;
}

/** What the search page is for, under its heading. */
function SearchPurpose() {
  return (
    <p class="lede">
      Search the published modules, people's public profiles and their public journal entries.
    </p>
  );
}
