/**
 * The request form (/request): a request or report, posted as POST /api/requests's body with
 * its schema, and the page it answers with (/request/sent).
 */
import { published } from "../kv/catalogue/catalogue_doc.ts";
import { createRequest, REQUEST_KINDS, type RequestKind } from "../kv/forms/requests.ts";
import type { Deps } from "../lib/deps.ts";
import { RequestBody } from "../http/catalogue_inputs.ts";
import { emptyView, type FormView, nonBlank, readForm, submitForm } from "./_form.tsx";
import { fields } from "./_form_controls.tsx";
import { viewer, type WebCtx } from "./_web.tsx";
import { Honeypot } from "./_honeypot.tsx";

const REQUEST_LABELS: Record<string, string> = {
  name: "Your name",
  email: "E-mail address",
  kind: "What is it about",
  org: "Organisation (optional)",
  module: "Which module (for a problem or an offer of help)",
  text: "Your message",
};

/** Each kind of request in the words of the person sending it (the API takes the values). */
const KIND_TEXT: Record<RequestKind, string> = {
  module: "Ask for a new module",
  track: "Ask for a new track (a series of modules)",
  tool: "Suggest a tool for teaching",
  service: "Ask about a service",
  report: "Report a problem with a module",
  contribute: "Offer to help with a module",
  other: "Something else",
};

/**
 * The request form's heading and title by the kind it was opened for: a module page's "Report a
 * problem" and "Offer to help" links land on a form titled so.
 */
const REQUEST_TITLES: Partial<Record<RequestKind, [title: string, lede: string]>> = {
  report: [
    "Report a problem with a module",
    "Tell the team what is wrong (a broken link, a mistake, something unclear). The team reads " +
    "every message; your address is used only to answer you.",
  ],
  contribute: [
    "Offer to help with a module",
    "Tell the team how you would like to help. The team reads every message; your address is " +
    "used only to answer you.",
  ],
};
const REQUEST_TITLE: [string, string] = [
  "Request a module",
  "Ask for a module or a track, or report a problem with a module. The team reads every " +
  "message; your address is used only to answer you.",
];
const requestTitle = (kind: string | undefined) =>
  REQUEST_TITLES[kind as RequestKind] ?? REQUEST_TITLE;

/** A published module as the request form offers it: chosen by its title, sent as its slug. */
type ModuleChoice = [slug: string, title: string];

function RequestForm(props: { view: FormView; modules: ModuleChoice[] }) {
  const F = fields(props.view, REQUEST_LABELS, RequestBody);
  const chosen = props.view.values.module ?? "";
  // A slug sent by hand that is not in the list (an old link) stays chosen rather than lost.
  const extra = chosen && !props.modules.some(([slug]) => slug === chosen)
    ? [[chosen, chosen] as ModuleChoice]
    : [];
  const [title, lede] = requestTitle(props.view.values.kind);
  return (
    <>
      <h1>{title}</h1>
      <p>{lede}</p>
      <F.Summary />
      <form method="post" action="/request" novalidate>
        <F.Field name="name" required autocomplete="name" />
        <F.Field name="email" type="email" required autocomplete="email" />
        <F.Select name="kind" options={REQUEST_KINDS.map((k) => [k, KIND_TEXT[k]])} />
        <F.Field name="org" autocomplete="organization" />
        <F.Select
          name="module"
          options={[["", "No module in particular"], ...extra, ...props.modules]}
        />
        <F.TextArea name="text" required rows={8} />
        <Honeypot />
        <button type="submit">Send the request</button>
      </form>
    </>
  );
}

/** The published modules by title, for the request form's choice. */
async function moduleChoices(deps: Deps): Promise<ModuleChoice[]> {
  const { modules } = await published(deps);
  return modules.map((m): ModuleChoice => [m.slug, m.title])
    .sort((a, b) => a[1].localeCompare(b[1]));
}

export async function postRequest(deps: Deps, c: WebCtx) {
  const modules = await moduleChoices(deps);
  return await submitForm(c, {
    schema: RequestBody,
    input: (f) => ({
      name: f.name ?? "",
      email: f.email ?? "",
      kind: f.kind,
      text: f.text ?? "",
      org: nonBlank(f.org),
      module: nonBlank(f.module),
      website: nonBlank(f.website),
    }),
    act: async (input) => {
      // A filled honeypot: the same answer, nothing done.
      const { website, ...request } = input;
      if (website) return "/request/sent";
      await createRequest(deps, request);
      return "/request/sent";
    },
    show: (view) => <RequestForm view={view} modules={modules} />,
    page: { title: requestTitle((await readForm(c)).kind)[0] },
  });
}

/** GET /request: a module page's "report a problem" link names the module and the kind. */
export async function getRequest(deps: Deps, c: WebCtx) {
  const kind = REQUEST_KINDS.find((k) => k === c.req.query("kind")) ?? "module";
  const module = c.req.query("module") ?? "";
  // A signed-in person's name and address are filled in; they stay editable.
  const me = viewer(c);
  const view = emptyView({
    kind,
    module: /^[a-z0-9-]{1,80}$/.test(module) ? module : "",
    name: me?.name,
    email: me?.email,
  });
  return c.render(<RequestForm view={view} modules={await moduleChoices(deps)} />, {
    title: requestTitle(kind)[0],
    canonical: "/request",
    description: "Ask for a module or a track, or report a problem.",
  });
}

export function getRequestSent(c: WebCtx) {
  return c.render(
    <>
      <h1>Thank you</h1>
      <p>Your message has reached the team.</p>
      <p>
        <a href="/catalogue">Back to the catalogue</a>
      </p>
    </>,
    { title: "Request sent", noindex: true },
  );
}
