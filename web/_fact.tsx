/**
 * A term of a description list and what it says, left out when there is nothing to say: the
 * facts of a service's page, a module's page, a profile and the dashboard row's details.
 */
import type { Child } from "hono/jsx";

/** `term` and its description (`children`), shown only when `show` holds something. */
export function Fact({ term, show, children }: { term: string; show: unknown; children?: Child }) {
  return show
    ? (
      <>
        <dt>{term}</dt>
        <dd>{children}</dd>
      </>
    )
    : null;
}
