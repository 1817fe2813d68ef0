/**
 * The two public forms: a request or report (/request, POST /api/requests's form) and a
 * module proposal (/contribute, POST /api/contributions's form), with the same schemas, limits
 * and domain functions as the API. Each answers 303 to a page saying what happens next.
 * This file holds the routes; the request form and its answer are web/_request_page.tsx, the
 * proposal form and its answer web/_proposal_page.tsx, the proposal form's values as the API's
 * body web/_proposal_input.ts, the field for robots web/_honeypot.tsx.
 */
import type { Deps } from "../lib/deps.ts";
import { formLimit, webRouter } from "./_web.tsx";
import { getRequest, getRequestSent, postRequest } from "./_request_page.tsx";
import { getContribute, getContributeSent, postContribute } from "./_proposal_page.tsx";

export { FILE_ROWS } from "./_proposal_input.ts";

export function formPages(deps: Deps) {
  const app = webRouter();

  app.get("/request", (c) => getRequest(deps, c));

  app.post("/request", (c) => postRequest(deps, c));

  app.get("/request/sent", (c) => getRequestSent(c));

  app.get("/contribute", (c) => getContribute(c));

  // summary 4,000 + trail 12,000 + records 16,000 characters, ten file rows.
  app.post("/contribute", formLimit(512 * 1024), (c) => postContribute(deps, c));

  app.get("/contribute/sent", (c) => getContributeSent(c));

  return app;
}
