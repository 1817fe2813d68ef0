/**
 * The query of the watch list (/watch) and what stands around its table: the filters' GET form
 * (search, state, group, place, tag, sort), the counts of each state with their links, and the
 * links to the other pages of the list.
 */
import { z } from "zod";
import { type Board, BOARD_SORTS, type BoardSort, SHOWN_STATES } from "../kv/service/dashboard.ts";
import { UserText } from "./_layout.tsx";
import { STATE_TEXT } from "./_state.tsx";

const blank = (v: unknown) => (v === "" ? undefined : v);
/** What the list's address asks for; a value it cannot use counts as not given. */
export const BoardQuery = z.object({
  state: z.preprocess(blank, z.enum(SHOWN_STATES).optional()).catch(undefined),
  group: z.preprocess(blank, z.string().max(80).optional()).catch(undefined),
  place: z.preprocess(blank, z.string().max(80).optional()).catch(undefined),
  tag: z.preprocess(blank, z.string().max(80).optional()).catch(undefined),
  q: z.preprocess(blank, z.string().max(200).optional()).catch(undefined),
  sort: z.preprocess(blank, z.enum(BOARD_SORTS).optional()).catch(undefined),
  page: z.coerce.number().int().min(1).max(10_000).optional().catch(undefined),
});
export type WatchQuery = z.infer<typeof BoardQuery>;
/** The query's filters an address of the list keeps. */
const QUERY_KEYS: (keyof WatchQuery)[] = ["q", "state", "group", "place", "tag", "sort"];

/** The dashboard's address with these filters (and `change` over them). */
export function boardHref(
  q: WatchQuery,
  change: Partial<Record<keyof WatchQuery, string | undefined>> = {},
) {
  const p = new URLSearchParams();
  for (const k of QUERY_KEYS) {
    const v = k in change ? change[k] : q[k];
    if (v) p.set(k, String(v));
  }
  if (change.page) p.set("page", change.page);
  const text = p.toString();
  return text ? `/watch?${text}` : "/watch";
}

export const SORT_WORDS: Record<BoardSort, string> = {
  problems: "Problems first",
  name: "Name",
  group: "Group",
  kind: "Kind",
  last: "Last heard",
  created: "Oldest first",
};

/** One filter: a select of its choices (`[value, label]`), the chosen one selected. */
function Filter(
  props: { name: string; label: string; choices: [string, string][]; chosen: string },
) {
  const id = `f-${props.name}`;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <select id={id} name={props.name}>
        {props.choices.map(([value, label]) => (
          <option value={value} selected={props.chosen === value}>{label}</option>
        ))}
      </select>
    </div>
  );
}

/** Choices whose labels are their values (a group, a place, a tag), after the one for all. */
const choicesOf = (all: string, values: string[]): [string, string][] => [
  ["", all],
  ...values.map((v): [string, string] => [v, v]),
];

/** The filters' GET form: the search box, and the state, group, place, tag and sort under a fold. */
export function BoardFilters({ board, q }: { board: Board; q: WatchQuery }) {
  const narrowed = !!(q.state || q.group || q.place || q.tag || q.sort);
  return (
    <form method="get" action="/watch" class="filters board-filters" role="search">
      <div class="field">
        <label for="f-q">Search services</label>
        <input id="f-q" type="search" name="q" maxlength={200} value={q.q ?? ""} />
      </div>
      <details class="more-filters" open={narrowed}>
        <summary>Filter and sort</summary>
        <div class="filters">
          <Filter
            name="state"
            label="State"
            chosen={q.state ?? ""}
            choices={[
              ["", "All states"],
              ...SHOWN_STATES.map((s): [string, string] => [
                s,
                `${STATE_TEXT[s]} (${board.counts[s]})`,
              ]),
            ]}
          />
          <Filter
            name="group"
            label="Group"
            chosen={q.group ?? ""}
            choices={choicesOf("All groups", board.groups)}
          />
          {board.places.length
            ? (
              <Filter
                name="place"
                label="Place"
                chosen={q.place ?? ""}
                choices={choicesOf("All places", board.places)}
              />
            )
            : null}
          {board.tags.length
            ? (
              <Filter
                name="tag"
                label="Tag"
                chosen={q.tag ?? ""}
                choices={choicesOf("All tags", board.tags)}
              />
            )
            : null}
          <Filter
            name="sort"
            label="Sort by"
            chosen={q.sort ?? "problems"}
            choices={BOARD_SORTS.map((s): [string, string] => [s, SORT_WORDS[s]])}
          />
        </div>
      </details>
      <div class="field">
        <button type="submit">Show</button>
      </div>
    </form>
  );
}

/** The counts of each state, each a link to its filter; the tag chosen, with its way out. */
export function BoardSummary({ board, q }: { board: Board; q: WatchQuery }) {
  const shown = SHOWN_STATES.filter((s) => board.counts[s] > 0);
  const filtered = board.matched !== board.total;
  return (
    <div class="board-summary">
      <ul class="inline summary" aria-label="Services by state">
        {shown.map((s) => (
          <li>
            <a href={`/watch?state=${s}`} class={`tag state state-${s}`}>
              {board.counts[s]} {STATE_TEXT[s]}
            </a>
          </li>
        ))}
        {q.tag
          ? (
            <li>
              Tagged{" "}
              <span class="chip">
                <UserText>{q.tag}</UserText>
              </span>{" "}
              <a href={boardHref(q, { tag: undefined })}>Show every tag</a>
            </li>
          )
          : null}
      </ul>
      <p role="status" class="meta">
        {filtered
          ? `${board.matched} of ${board.total} services match.`
          : `${board.total} service${board.total === 1 ? "" : "s"}.`}
      </p>
    </div>
  );
}

/** The links to the previous and next page of the list, when it has more than one. */
export function BoardPageLinks({ board, q }: { board: Board; q: WatchQuery }) {
  if (board.pages <= 1) return null;
  const href = (page: number) => boardHref(q, { page: String(page) });
  return (
    <nav aria-label="Pages of services" class="pages">
      <ul class="inline">
        {board.page > 1
          ? (
            <li>
              <a href={href(board.page - 1)} rel="prev">Previous page</a>
            </li>
          )
          : null}
        <li>Page {board.page} of {board.pages}</li>
        {board.page < board.pages
          ? (
            <li>
              <a href={href(board.page + 1)} rel="next">Next page</a>
            </li>
          )
          : null}
      </ul>
    </nav>
  );
}
