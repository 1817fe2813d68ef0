/** What the account pages (/me and below) share: their navigation and how they show times. */
import type { Account } from "../kv/accounts/accounts.ts";
import { isTeam } from "../kv/accounts/accounts.ts";
import { iso, readable } from "../lib/clock.ts";
import { agoText } from "../lib/display.ts";
import { cachedPart, UserText } from "./_layout.tsx";

/** The pages under /me, in the order the navigation lists them, with what each is for. */
export const ME_PAGES: [path: string, label: string, purpose: string][] = [
  ["/me", "Overview", "Your account at a glance, and where to find everything."],
  ["/me/profile", "Profile", "Your name, picture and what others see on your public profile."],
  [
    "/me/journal",
    "Journal",
    "Short notes about your work, shown on your public profile unless you make them private.",
  ],
  ["/me/devices", "Devices", "The browsers and programs signed in to your account; end any."],
  [
    "/me/sign-in-methods",
    "Sign-in methods",
    "Accounts elsewhere and passkeys that sign you in, besides the mailed link.",
  ],
  [
    "/me/services",
    "Services",
    "Websites, servers and cron jobs this site checks for you, with alerts and a status page.",
  ],
  ["/me/files", "Files", "Files you keep here, private or with a link anyone can open."],
  [
    "/me/standing",
    "Standing and invitations",
    "What your account may do here, how to become a contributor, and inviting others.",
  ],
  [
    "/me/work",
    "Modules and proposals",
    "The catalogue modules you help write, and the modules you proposed.",
  ],
  ["/me/data", "Your data", "Download everything held about you, or erase your account."],
];

/** One line under a page's heading: what the page is for (from ME_PAGES). */
export function Purpose(props: { here: string }) {
  const found = ME_PAGES.find(([path]) => path === props.here);
  return found ? <p class="lede">{found[2]}</p> : null;
}

/** What each standing (derived from the roles) lets a person do, in one line. */
export const STANDING_WORDS: Record<string, string> = {
  collector:
    "you can keep a profile, a journal, files and watched services, and give points to modules. To edit modules, apply to become a contributor.",
  contributor: "you can also edit the modules you contribute to and add contributors to them.",
  reviewer: "you also review proposals, applications and requests for the team.",
  owner:
    "you run this site: everything a reviewer does, and publishing modules. You give roles with a command on the server machine (deno task roles).",
};

/**
 * A standing as pages name it: the API's `collector` (an account with no role) is a "member"
 * to a reader; the others keep their names.
 */
export const standingName = (standing: string) => standing === "collector" ? "member" : standing;

/** A record's page title (a name the user gave), under the link to the list it is part of. */
export function CrumbTitle(props: { up: [href: string, label: string]; title: string }) {
  const [href, label] = props.up;
  return (
    <>
      <p class="meta crumbs">
        <a href={href}>{label}</a> › <UserText>{props.title}</UserText>
      </p>
      <h1>
        <UserText>{props.title}</UserText>
      </h1>
    </>
  );
}

/** The account pages' own navigation (and the team's, for reviewers and the owner). */
export function MeNav(props: { here: string; viewer?: Account | null }) {
  const team = !!props.viewer && isTeam(props.viewer);
  return cachedPart(
    `me nav ${props.here} ${team}`,
    () => <MeNavLinks here={props.here} team={team} />,
  );
}

function MeNavLinks(props: { here: string; team: boolean }) {
  return (
    <nav aria-label="Your account" class="subnav">
      <ul class="inline">
        {ME_PAGES.map(([path, label]) => (
          <li>
            <a href={path} aria-current={path === props.here ? "page" : undefined}>{label}</a>
          </li>
        ))}
        {props.team
          ? (
            <li>
              <a href="/team">Team</a>
            </li>
          )
          : null}
      </ul>
    </nav>
  );
}

/** A time as people read it, in UTC (the server does not know the reader's zone). */
export function when(ms: number | null | undefined): string {
  return ms == null ? "never" : readable(ms);
}

/**
 * A time as relative words ("3 minutes ago") with the exact time on hover; web/static/site.js
 * writes both again in the reader's own time zone and keeps the words current. `data-ago` holds
 * the time the words were written for, so the script's first rewrite counts from the same moment.
 */
export function Ago(props: { at: number | null | undefined; now: number }) {
  if (props.at == null) return <>never</>;
  return (
    <time datetime={iso(props.at)} title={when(props.at)} data-ago={String(props.now)}>
      {agoText(props.at, props.now)}
    </time>
  );
}

/**
 * When something is expected next: "in 5 minutes", or, once that time has passed and it has not
 * come, "due 5 minutes ago" ("due just now"): a late heartbeat's next run never reads as if it
 * had happened.
 */
export function Due(props: { at: number; now: number }) {
  return props.at <= props.now
    ? (
      <>
        due <Ago at={props.at} now={props.now} />
      </>
    )
    : <Ago at={props.at} now={props.now} />;
}

/** An exact time (UTC on the server), written in the reader's time zone by site.js. */
export function At(props: { at: number }) {
  return <time datetime={iso(props.at)} data-local="">{when(props.at)}</time>;
}

/** Bytes as people read them. */
export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 1024 ** 3) return `${(n / 1024 / 1024).toFixed(1)} MB`;
  return `${(n / 1024 ** 3).toFixed(2)} GB`;
}
