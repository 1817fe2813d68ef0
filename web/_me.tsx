/** What the account pages (/me and below) share: their navigation and how they show times. */
import type { Account } from "../kv/accounts.ts";
import { isTeam } from "../kv/accounts.ts";
import { iso } from "../lib/clock.ts";

/** The pages under /me, in the order the navigation lists them. */
export const ME_PAGES: [path: string, label: string][] = [
  ["/me", "Overview"],
  ["/me/profile", "Profile"],
  ["/me/journal", "Journal"],
  ["/me/devices", "Devices"],
  ["/me/services", "Services"],
  ["/me/files", "Files"],
  ["/me/standing", "Standing and invitations"],
  ["/me/work", "Modules and proposals"],
  ["/me/data", "Your data"],
];

/** The account pages' own navigation (and the team's, for reviewers and the owner). */
export function MeNav(props: { here: string; viewer?: Account | null }) {
  return (
    <nav aria-label="Your account" class="subnav">
      <ul class="inline">
        {ME_PAGES.map(([path, label]) => (
          <li>
            <a href={path} aria-current={path === props.here ? "page" : undefined}>{label}</a>
          </li>
        ))}
        {props.viewer && isTeam(props.viewer)
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
  if (ms == null) return "never";
  return iso(ms).slice(0, 16).replace("T", " ") + " UTC";
}

/** Bytes as people read them. */
export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  if (n < 1024 ** 3) return `${(n / 1024 / 1024).toFixed(1)} MB`;
  return `${(n / 1024 ** 3).toFixed(2)} GB`;
}
