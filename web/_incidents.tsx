/**
 * Incidents as people read them, on the status page and the owner's pages alike: the open ones
 * at the top, each with its updates newest first; then the history by month, each incident with
 * its updates, its times (in the reader's zone, web/static/site.js) and how long it lasted.
 */
import {
  byMonth,
  IMPACT_WORDS,
  type Incident,
  type IncidentState,
  STATE_WORDS,
} from "../kv/status/incidents.ts";
import { monthWords } from "../lib/clock.ts";
import { durationText } from "../lib/report.ts";
import { UserText } from "./_layout.tsx";
import { At } from "./_me.tsx";

const TONE: Record<IncidentState, string> = {
  investigating: "off",
  identified: "warn",
  monitoring: "maintenance",
  resolved: "ok",
};

/** An incident's state in its colour, with its word. */
export function IncidentStateTag({ state }: { state: IncidentState }) {
  return <span class={`tag state state-${TONE[state]}`}>{STATE_WORDS[state]}</span>;
}

/** One incident: title, state, impact, affected services, its updates newest first. */
export function IncidentCard(
  props: {
    i: Incident;
    names: Map<number, string>;
    level: 3 | 4;
    link?: string;
    /** A sentence that explains the outage (a maintenance window, a dependency). */
    explained?: string | null;
    /** Its title is the page's own heading: not said again. */
    untitled?: boolean;
  },
) {
  const { i, names } = props;
  const affected = i.services.map((id) => names.get(id)).filter((n): n is string => !!n);
  const Title = props.level === 3 ? "h3" : "h4";
  return (
    <article
      class="incident"
      id={`incident-${i.id}`}
      aria-labelledby={props.untitled ? undefined : `incident-${i.id}-title`}
      aria-label={props.untitled ? i.title : undefined}
    >
      <Title id={`incident-${i.id}-title`}>
        {props.link
          ? (
            <a href={props.link}>
              <UserText>{i.title}</UserText>
            </a>
          )
          : <UserText>{i.title}</UserText>}
      </Title>
      <p class="meta">
        <IncidentStateTag state={i.state} /> · Impact: {IMPACT_WORDS[i.impact]}
        {affected.length
          ? (
            <>
              {" · Affects "}
              <UserText>{affected.join(", ")}</UserText>
            </>
          )
          : null}
        {" · "}
        {i.resolved === null
          ? (
            <>
              open since <At at={i.created} />
            </>
          )
          : <>lasted {durationText((i.resolved - i.created) / 1000)}</>}
      </p>
      {props.explained
        ? (
          <p class="notice">
            Explained: <UserText>{props.explained}</UserText>
          </p>
        )
        : null}
      <ol class="timeline" reversed>
        {[...i.updates].reverse().map((u) => (
          <li>
            <p class="meta">
              <strong>{STATE_WORDS[u.state]}</strong> · <At at={u.at} />
            </p>
            <p class="update-text">
              <UserText>{u.text}</UserText>
            </p>
          </li>
        ))}
      </ol>
    </article>
  );
}

interface ListProps {
  list: Incident[];
  names: Map<number, string>;
  link?: (i: Incident) => string;
  explained?: (i: Incident) => string | null | undefined;
}

/** The open incidents, each with its updates (the top of a status page). */
export function OpenIncidents(props: ListProps & { none?: string; heading?: string }) {
  const open = props.list.filter((i) => i.resolved === null);
  if (!open.length && props.none === undefined) return null;
  return (
    <section aria-labelledby="open-incidents" class="panel open-incident">
      <h2 id="open-incidents">{props.heading ?? "Open incidents"}</h2>
      {open.length
        ? open.map((i) => (
          <IncidentCard
            i={i}
            names={props.names}
            level={3}
            link={props.link?.(i)}
            explained={props.explained?.(i)}
          />
        ))
        : <p>{props.none}</p>}
    </section>
  );
}

/** The resolved incidents by month, newest first, each with its updates and duration. */
export function IncidentHistory(props: ListProps) {
  const past = props.list.filter((i) => i.resolved !== null);
  return (
    <section aria-labelledby="incident-history" class="panel">
      <h2 id="incident-history">Incident history</h2>
      {past.length
        ? byMonth(past).map(([month, list]) => (
          <section aria-labelledby={`month-${month}`}>
            <h3 id={`month-${month}`}>{monthWords(month)}</h3>
            {list.map((i) => (
              <IncidentCard
                i={i}
                names={props.names}
                level={4}
                link={props.link?.(i)}
                explained={props.explained?.(i)}
              />
            ))}
          </section>
        ))
        : <p>No past incidents in the last year.</p>}
    </section>
  );
}

/** The open incidents at the top, then the history by month (the owner's list). */
export function IncidentsPart(props: ListProps & { none?: string }) {
  return (
    <>
      <OpenIncidents {...props} none={props.none ?? "No open incidents."} />
      <IncidentHistory {...props} />
    </>
  );
}
