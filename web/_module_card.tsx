/**
 * One module in a list (the catalogue's cards, the home page's newest and most pointed): its
 * title, its lede or the keyword's snippet, licence, state, area, track, points and date.
 */
import type { Module } from "../kv/catalogue/modules.ts";
import type { ModuleMatch } from "../kv/search/module_search.ts";
import { isoDate } from "../lib/clock.ts";
import { licenceOf, NO_LICENCE } from "../lib/learning.ts";
import { AfterDot, UserText } from "./_layout.tsx";

/** One module in a list. */
export function ModuleCard(props: { m: Module; points: number; hit?: ModuleMatch }) {
  const { m, hit } = props;
  return (
    <li>
      <h3>
        <a href={`/modules/${m.slug}`}>
          <UserText>{m.title}</UserText>
        </a>
      </h3>
      {hit && hit.field !== "lede" && hit.field !== "title" && hit.field !== "people"
        ? (
          <p class="snippet">
            <Marked text={hit.snippet} marks={hit.marks} />
          </p>
        )
        : (
          <p>
            {hit?.field === "lede"
              ? <Marked text={hit.snippet} marks={hit.marks} />
              : <UserText>{m.lede}</UserText>}
          </p>
        )}
      <p class="meta">
        <LicenceTag licence={m.licence} />
        <span class="tag">{m.state}</span> <UserText>{m.area}</UserText>
        <AfterDot text={m.track} /> · {props.points} point
        {props.points === 1 ? "" : "s"} · updated {isoDate(m.updated)}
      </p>
    </li>
  );
}

/** A text with its matched words marked. */
function Marked({ text, marks }: { text: string; marks: [number, number][] }) {
  const parts: (string | [string])[] = [];
  let at = 0;
  for (const [a, b] of marks) {
    if (a < at) continue;
    parts.push(text.slice(at, a), [text.slice(a, b)]);
    at = b;
  }
  parts.push(text.slice(at));
  return (
    <bdi>
      {parts.map((p) => typeof p === "string" ? p : <mark>{p[0]}</mark>)}
    </bdi>
  );
}

/** A module's licence in a list: its short name, or that none is stated. */
function LicenceTag({ licence }: { licence: string | null }) {
  const l = licenceOf(licence);
  return (
    <>
      <span class={l?.url ? "tag open" : "tag"}>{l ? l.short : NO_LICENCE}</span>
      {" "}
    </>
  );
}
