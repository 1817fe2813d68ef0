/**
 * A public profile (/people/<slug>): the account's name, picture, facts, biography, modules and
 * public journal; and the profile paths of named accounts, which the search and the sitemap link.
 */
import { accountKey, getAccount, slugKey } from "../kv/accounts/accounts.ts";
import { Fact } from "./_fact.tsx";
import { publicProfile } from "../kv/accounts/profile.ts";
import type { Deps } from "../lib/deps.ts";
import { displayText } from "../lib/display.ts";
import { fail } from "../http/errors.ts";
import { UserText } from "./_layout.tsx";
import { standingName } from "./_me.tsx";
import type { WebCtx } from "./_web.tsx";

const SLUG = /^[a-z0-9-]{1,80}$/;

type PublicProfile = Awaited<ReturnType<typeof publicProfile>>;

export async function getPeopleSlug(deps: Deps, c: WebCtx) {
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

/** Profile paths of named accounts, by id. */
export async function profileSlugsOf(deps: Deps, ids: number[]): Promise<Map<number, string>> {
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
