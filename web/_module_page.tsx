/**
 * A module's page at its `url` (/modules/<slug>): its facts, licence, materials, contributors,
 * point button and sharing, with its AMB record as JSON-LD.
 */
import { type Account, getAccount } from "../kv/accounts/accounts.ts";
import { Fact } from "./_fact.tsx";
import { ambRecord } from "../kv/catalogue/amb.ts";
import { type Material, readableSize, readableType } from "../kv/catalogue/materials.ts";
import type { Module } from "../kv/catalogue/modules.ts";
import { pointKey } from "../kv/catalogue/points.ts";
import { isoDate } from "../lib/clock.ts";
import type { Deps } from "../lib/deps.ts";
import { displayText } from "../lib/display.ts";
import { learningOf } from "../lib/learning.ts";
import { fail } from "../http/errors.ts";
import { catalogue } from "./_catalogue.ts";
import { LearningRows, LicenceBadge } from "./_learning.tsx";
import { CopyField, PostButton, UserText } from "./_layout.tsx";
import { viewer, type WebCtx } from "./_web.tsx";

/** What a point is, where points are counted. */
const POINT_WORDS =
  "A point is one signed-in person saying the module is useful; each person gives a module at most one, and can take it back.";

export async function getModulesSlug(deps: Deps, c: WebCtx) {
  const cat = await catalogue(deps);
  const m = cat.bySlug.get(c.req.param("slug")!);
  if (!m) fail(404, "There is no published module at this address.");
  const me = viewer(c);
  const [people, mine] = await Promise.all([
    contributorsOf(deps, m),
    me ? deps.kv.get(pointKey(m.slug, me.id)).then((e) => e.value !== null) : false,
  ]);
  const points = cat.counts.get(m.slug) ?? 0;
  const url = `${deps.config.baseUrl}/modules/${m.slug}`;
  return c.render(
    <ModulePage m={m} people={people} points={points} mine={mine} signedIn={!!me} url={url} />,
    {
      title: displayText(m.title),
      description: displayText(m.lede),
      canonical: `/modules/${m.slug}`,
      jsonLd: learningResource(deps, m, people, url),
      ogType: "article",
    },
  );
}

interface Person {
  id: number;
  name: string;
  slug: string;
}

/** The contributors with their names and profile paths (unnamed accounts have none). */
async function contributorsOf(deps: Deps, m: Module): Promise<Person[]> {
  const found = await Promise.all(m.contributors.map((id) => getAccount(deps.kv, id)));
  return found.map((e) => e.value).filter((a): a is Account => !!a && !!a.name)
    .map((a) => ({ id: a.id, name: a.name, slug: a.slug }));
}

/** The module's AMB record (kv/catalogue/amb.ts), its creators the named contributors. */
function learningResource(deps: Deps, m: Module, people: Person[], url: string) {
  return ambRecord(m, {
    url,
    baseUrl: deps.config.baseUrl,
    parts: partsOf(m, deps.config.baseUrl),
    creators: people.map((p) => ({
      name: p.name,
      url: p.slug ? `${deps.config.baseUrl}/people/${p.slug}` : undefined,
    })),
  });
}

/** A fact's value: an https address is a link (a proposal's files become facts). */
function FactValue({ value }: { value: string }) {
  return /^https:\/\/\S+$/.test(value) && URL.canParse(value)
    ? (
      <a href={value}>
        <UserText>{value}</UserText>
      </a>
    )
    : <UserText>{value}</UserText>;
}

function ModulePage(
  props: {
    m: Module;
    people: Person[];
    points: number;
    mine: boolean;
    signedIn: boolean;
    url: string;
  },
) {
  const { m, people } = props;
  return (
    <article>
      <h1>
        <UserText>{m.title}</UserText>
      </h1>
      <p class="lede">
        <UserText>{m.lede}</UserText>
      </p>
      <LicenceBadge title={m.title} by={m.by} licence={m.licence} />
      <dl>
        <dt>State</dt>
        <dd>{m.state}</dd>
        <Fact term="For" show={m.who}>
          <UserText>{m.who}</UserText>
        </Fact>
        <LearningRows l={learningOf(m)} />
        <dt>Area</dt>
        <dd>
          <a href={`/catalogue?area=${encodeURIComponent(m.area)}`}>
            <UserText>{m.area}</UserText>
          </a>
        </dd>
        <Fact term="Track" show={m.track}>
          <a href={`/catalogue?track=${encodeURIComponent(m.track)}`}>
            <UserText>{m.track}</UserText>
          </a>
        </Fact>
        <dt>By</dt>
        <dd>
          <UserText>{m.by}</UserText>
        </dd>
        <Fact term="Details" show={m.meta}>
          <UserText>{m.meta}</UserText>
        </Fact>
        <dt>Updated</dt>
        <dd>
          <time datetime={isoDate(m.updated)}>{isoDate(m.updated)}</time>
        </dd>
        {m.facts.map(([label, value]) => (
          <>
            <dt>
              <UserText>{label}</UserText>
            </dt>
            <dd>
              <FactValue value={value} />
            </dd>
          </>
        ))}
      </dl>
      <Materials list={m.materials ?? []} />
      <h2>About</h2>
      {m.about.split(/\n{2,}/).map((para) => (
        <p>
          <UserText>{para}</UserText>
        </p>
      ))}
      {m.gets.length
        ? (
          <>
            <h2>What you get</h2>
            <ul>
              {m.gets.map((g) => (
                <li>
                  <UserText>{g}</UserText>
                </li>
              ))}
            </ul>
          </>
        )
        : null}
      {m.note
        ? (
          <>
            <h2>Note</h2>
            <p>
              <UserText>{m.note}</UserText>
            </p>
          </>
        )
        : null}
      <h2>Contributors</h2>
      {people.length
        ? (
          <ul>
            {people.map((p) => (
              <li>
                {p.slug
                  ? (
                    <a href={`/people/${p.slug}`}>
                      <UserText>{p.name}</UserText>
                    </a>
                  )
                  : <UserText>{p.name}</UserText>}
              </li>
            ))}
          </ul>
        )
        : <p>No named contributors yet.</p>}
      <h2 id="points">Points</h2>
      <p>
        {props.points} point{props.points === 1 ? "" : "s"}
        {props.mine ? ", one of them yours" : ""}.
      </p>
      <p class="hint">{POINT_WORDS}</p>
      {props.signedIn
        ? (
          <PostButton
            action={`/modules/${m.slug}/point`}
            kind={props.mine ? "secondary" : undefined}
            block
          >
            {props.mine ? "Withdraw my point" : "Give a point"}
          </PostButton>
        )
        : (
          <p>
            <a href={`/sign-in?next=${encodeURIComponent(`/modules/${m.slug}`)}`}>
              Sign in to give a point
            </a>
          </p>
        )}
      <h2>Share</h2>
      <CopyField
        id="page-link"
        label="Link to this module"
        value={props.url}
        copy="Copy link"
        class="share"
      />
      <p class="noprint">
        <a href={`/request?kind=report&module=${m.slug}`}>Report a problem with this module</a>
        {" · "}
        <a href={`/request?kind=contribute&module=${m.slug}`}>Offer to help with it</a>
      </p>
    </article>
  );
}

/** A module's materials as parts of its record: absolute addresses. */
function partsOf(m: Module, base: string) {
  return (m.materials ?? []).map((x) => ({
    name: x.label,
    url: x.url.startsWith("/") ? `${base}${x.url}` : x.url,
    type: x.type ?? undefined,
    size: x.size ?? undefined,
  }));
}

/** The materials: each a link with its kind and size. */
function Materials({ list }: { list: Material[] }) {
  if (list.length === 0) return null;
  return (
    <>
      <h2>Materials</h2>
      <ul class="materials">
        {list.map((x) => (
          <li>
            <a href={x.url}>
              <UserText>{x.label}</UserText>
            </a>{" "}
            <span class="meta">
              {readableType(x.type, x.url)}
              {x.size !== null ? `, ${readableSize(x.size)}` : ""}
            </span>
          </li>
        ))}
      </ul>
    </>
  );
}
