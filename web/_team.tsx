/** What the team's pages share: their navigation, their frame and the id a route names. */
import type { Child } from "hono/jsx";
import type { WebCtx } from "./_web.tsx";

const TEAM_PAGES: [path: string, label: string][] = [
  ["/team", "Proposals"],
  ["/team/applications", "Applications"],
  ["/team/requests", "Requests"],
  ["/team/accounts", "Accounts"],
  ["/team/invitations", "Invitations"],
  ["/team/services", "All services"],
];

/** The links between the team's pages, the current one marked. */
export function TeamNav(props: { here: string }) {
  return (
    <nav aria-label="Team" class="subnav">
      <ul class="inline">
        {TEAM_PAGES.map(([path, label]) => (
          <li>
            <a href={path} aria-current={path === props.here ? "page" : undefined}>{label}</a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

/** A team page: the team's navigation with `here` marked, the title as its heading, the body. */
export const renderTeamPage = (c: WebCtx, here: string, title: string, body: Child) =>
  c.render(
    <>
      <TeamNav here={here} />
      <h1>{title}</h1>
      {body}
    </>,
    { title, noindex: true },
  );
