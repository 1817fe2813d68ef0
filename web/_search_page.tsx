/**
 * The search page (/search): modules, people's public profiles and their public journal entries
 * found for a keyword, with a spelling suggestion.
 */
import { RULES } from "../kv/store/rate_limit.ts";
import { search } from "../kv/search/search.ts";
import { isoDate } from "../lib/clock.ts";
import type { Deps } from "../lib/deps.ts";
import { displayText } from "../lib/display.ts";
import { clientOrigin, limit } from "../http/guards.ts";
import { UserText } from "./_layout.tsx";
import { profileSlugsOf } from "./_profile_page.tsx";
import type { WebCtx } from "./_web.tsx";

type Found = Awaited<ReturnType<typeof search>>;
type Person = (id: number, name: string) => unknown;

export async function getSearch(deps: Deps, c: WebCtx) {
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
  const slugs = await profileSlugsOf(deps, [
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

/** What the search page is for, under its heading. */
function SearchPurpose() {
  return (
    <p class="lede">
      Search the published modules, people's public profiles and their public journal entries.
    </p>
  );
}
