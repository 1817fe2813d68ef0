/**
 * The one layout of every page: header with the site's navigation and the sign-in or
 * account links, the page's main content, footer. Pages render through `c.render(body,
 * { title })` (hono/jsx-renderer, set up by web/_web.tsx for every path outside /api).
 */
import type { Child } from "hono/jsx";
import { raw } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";
import type { Account } from "../kv/accounts/accounts.ts";
import { displayText } from "../lib/display.ts";
import { assetUrl } from "./_static.ts";

export const SITE_NAME = "Community catalogue";

export interface PageProps {
  title: string;
  /** A short description for search engines and link previews. */
  description?: string;
  /** Keep the page out of search engines (personal and team pages, forms' results). */
  noindex?: boolean;
  /** Canonical path of the page (public pages). */
  canonical?: string;
  /** Extra ES modules of web/static/ this page uses. */
  scripts?: string[];
  /** Extra stylesheets (a viewer's own), as full paths. */
  styles?: string[];
  /** Structured data (schema.org), written as a JSON-LD data block. */
  jsonLd?: object;
  /** The Atom feed of this page's view (default: the whole catalogue's, on public pages). */
  feed?: { href: string; title: string };
  /** OpenGraph's type: "article" for a module, "website" otherwise. */
  ogType?: string;
  /**
   * A page that is a small site of its own (a public status page): its own header (title, logo,
   * the owner's link) instead of the catalogue's navigation, and its title alone.
   */
  own?: OwnSite;
  /** A page of wide tables (the dashboard): its main part takes up to 80rem, not 62. */
  wide?: boolean;
}

interface OwnSite {
  title: string;
  /** The page's own address (the header's title links to it). */
  home: string;
  /** A picture on this site (the owner's profile picture), or null. */
  logo: string | null;
  /** The owner's own site, or null. */
  link: string | null;
}

/** The header of a page that is a site of its own. */
function OwnHeader({ site }: { site: OwnSite }) {
  let host = "";
  try {
    host = site.link ? new URL(site.link).host : "";
  } catch { /* a stored link is always a URL; none shown otherwise */ }
  return (
    <header class="own">
      <a href={site.home} class="brand">
        {site.logo ? <img src={site.logo} alt="" width="40" height="40" class="logo" /> : null}
        <UserText>{site.title}</UserText>
      </a>
      {site.link && host
        ? (
          <a href={site.link} rel="noopener">
            <UserText>{host}</UserText>
          </a>
        )
        : null}
    </header>
  );
}

declare module "hono" {
  interface ContextRenderer {
    (content: Child, props: PageProps): Response | Promise<Response>;
  }
}

/** User text as shown: bidi and zero-width controls removed, its direction isolated. */
export function UserText(props: { children?: string | null }) {
  const text = displayText(props.children ?? "");
  return <bdi>{text}</bdi>;
}

/** A further user text after a middle dot ("Data · LAN"); nothing when there is none. */
export function AfterDot(props: { text?: string | null }) {
  return props.text
    ? (
      <>
        {" · "}
        <UserText>{props.text}</UserText>
      </>
    )
    : null;
}

/** Links as the items of the list around them; the one to `current` marked as this page. */
export function LinkItems(props: { links: [href: string, label: string][]; current?: string }) {
  return (
    <>
      {props.links.map(([href, label]) => (
        <li>
          <a href={href} {...(href === props.current ? { "aria-current": "page" as const } : {})}>
            {label}
          </a>
        </li>
      ))}
    </>
  );
}

/**
 * A form of one button that posts to `action`, with `fields` as its hidden inputs. It stands
 * beside other buttons and text (an inline form) unless `block`, on a line of its own with a
 * form's margins. With `confirm`, web/static/site.js asks that question first (a delete, a
 * removal). `kind` is the button's class; none for the page's main action.
 */
export function PostButton(
  props: {
    action: string;
    kind?: "danger" | "secondary" | "link";
    confirm?: string;
    /** The accessible name when the text alone is the same on every row ("Send a test alert"). */
    label?: string;
    fields?: Record<string, string>;
    block?: boolean;
    /** A sentence after the button that describes it (its `aria-describedby`). */
    hint?: { id: string; text: string };
    children?: Child;
  },
) {
  const form = { class: props.block ? undefined : "inline", "data-confirm": props.confirm };
  const button = {
    class: props.kind,
    "aria-label": props.label,
    "aria-describedby": props.hint?.id,
  };
  return (
    <form method="post" action={props.action} {...givenAttrs(form)}>
      {Object.entries(props.fields ?? {}).map(([name, value]) => (
        <input type="hidden" name={name} value={value} />
      ))}
      <button type="submit" {...givenAttrs(button)}>{props.children}</button>
      {props.hint ? <span class="hint" id={props.hint.id}>{props.hint.text}</span> : null}
    </form>
  );
}

/**
 * A value to copy: its label, a read-only box and a Copy button. web/static/site.js shows the
 * button and copies the box's value (without script the button stays hidden and the box can be
 * selected). `copy` is the button's text; `copyLabel` its accessible name where that text alone
 * is the same on every row; `class` adds to `field`; `row` puts box and button side by side.
 */
export function CopyField(
  props: {
    id: string;
    label: Child;
    value: string;
    copy?: Child;
    copyLabel?: string;
    class?: string;
    row?: boolean;
  },
) {
  const box = (
    <>
      <input id={props.id} type="text" readonly value={props.value} />
      <button
        type="button"
        data-copy={`#${props.id}`}
        {...givenAttrs({ "aria-label": props.copyLabel })}
        hidden
      >
        {props.copy ?? "Copy"}
      </button>
    </>
  );
  return (
    <div class={props.class ? `field ${props.class}` : "field"}>
      <label for={props.id}>{props.label}</label>
      {props.row ? <div class="copy-row">{box}</div> : box}
    </div>
  );
}

/** The attributes that have a value, to spread on an element: one not given is not written. */
export function givenAttrs(attrs: Record<string, string | undefined>) {
  return Object.fromEntries(Object.entries(attrs).filter(([, v]) => v !== undefined));
}

/** JSON for a `<script type="application/ld+json">` data block: no `<` can end the element. */
function jsonLdText(data: object): string {
  return JSON.stringify(data).replace(/</g, "\\u003c").replace(
    /\u2028|\u2029/g,
    (ch) => ch === "\u2028" ? "\\u2028" : "\\u2029",
  );
}

/**
 * A part of every page rendered once per key and kept as HTML: the navigations depend only on
 * where the page is and who looks, and rendering them for every page cost a small page much of
 * its CPU (docs/performance.md, "Process-wide caches"). Keys are few (paths of the navigations,
 * a viewer's name); the set is emptied when full.
 */
export function cachedPart(key: string, make: () => Child): HtmlEscapedString {
  let html = cachedParts.get(key);
  if (html === undefined) {
    html = raw(String(make()));
    if (cachedParts.size >= 1000) cachedParts.clear();
    cachedParts.set(key, html);
  }
  return html;
}
const cachedParts = new Map<string, HtmlEscapedString>();

/** The links of the main navigation: a page's path outside them renders as any other. */
const NAV_PATHS = new Set([
  "/catalogue",
  "/search",
  "/request",
  "/contribute",
  "/watch",
  "/me",
  "/sign-in",
]);

function Nav(props: { viewer: Account | null; path: string }) {
  const { viewer } = props;
  const path = NAV_PATHS.has(props.path) ? props.path : "";
  return cachedPart(
    viewer ? `nav in ${path} ${viewer.name}` : `nav out ${path}`,
    () => <NavLinks viewer={viewer} path={path} />,
  );
}

/** The top menu's links for everyone. */
const PUBLIC_LINKS: [string, string][] = [
  ["/catalogue", "Catalogue"],
  ["/search", "Search"],
  ["/request", "Request a module"],
  ["/contribute", "Propose a module"],
];

function NavLinks(props: { viewer: Account | null; path: string }) {
  const { viewer, path } = props;
  const here = (p: string) => (path === p ? { "aria-current": "page" as const } : {});
  return (
    <nav aria-label="Main">
      <ul>
        <LinkItems links={PUBLIC_LINKS} current={path} />
        {viewer
          ? (
            <>
              <LinkItems links={[["/watch", "Watching"]]} current={path} />
              <li>
                <a href="/me" {...here("/me")}>
                  Account{viewer.name
                    ? (
                      <>
                        {" ("}
                        <UserText>{viewer.name}</UserText>
                        {")"}
                      </>
                    )
                    : null}
                </a>
              </li>
              <li>
                <PostButton action="/sign-out" kind="link">Sign out</PostButton>
              </li>
            </>
          )
          : (
            <li>
              <a href="/sign-in" {...here("/sign-in")}>Sign in</a>
            </li>
          )}
      </ul>
    </nav>
  );
}

interface LayoutProps extends PageProps {
  children?: Child;
  baseUrl: string;
  viewer: Account | null;
  /** The request's path, to mark the current navigation link. */
  path: string;
}

/** The catalogue's feed link and the link preview (OpenGraph, Twitter) of a public page. */
function Preview(props: LayoutProps) {
  const feed = props.feed ?? { href: "/feed", title: "New and changed modules" };
  const url = props.baseUrl + (props.canonical ?? props.path);
  return (
    <>
      <link
        rel="alternate"
        type="application/atom+xml"
        title={feed.title}
        href={props.baseUrl + feed.href}
      />
      <meta property="og:site_name" content={SITE_NAME} />
      <meta property="og:title" content={props.title} />
      <meta property="og:type" content={props.ogType ?? "website"} />
      <meta property="og:url" content={url} />
      {props.description ? <meta property="og:description" content={props.description} /> : null}
      <meta name="twitter:card" content="summary" />
    </>
  );
}

export function Layout(props: LayoutProps) {
  const { viewer } = props;
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width,initial-scale=1" />
        <title>
          {props.title === SITE_NAME || props.own ? props.title : `${props.title} · ${SITE_NAME}`}
        </title>
        {props.description ? <meta name="description" content={props.description} /> : null}
        {props.noindex ? <meta name="robots" content="noindex" /> : null}
        {props.canonical ? <link rel="canonical" href={props.baseUrl + props.canonical} /> : null}
        {props.own || props.noindex ? null : <Preview {...props} />}
        {props.own && props.feed
          ? (
            <link
              rel="alternate"
              type="application/atom+xml"
              title={props.feed.title}
              href={props.baseUrl + props.feed.href}
            />
          )
          : null}
        <link rel="stylesheet" href={assetUrl("site.css")} />
        {(props.styles ?? []).map((href) => <link rel="stylesheet" href={href} />)}
        <script type="module" src={assetUrl("site.js")}></script>
        {(props.scripts ?? []).map((s) => <script type="module" src={assetUrl(s)}></script>)}
        {props.jsonLd
          ? (
            <script
              type="application/ld+json"
              dangerouslySetInnerHTML={{ __html: jsonLdText(props.jsonLd) }}
            />
          )
          : null}
      </head>
      <body class={props.wide ? "wide" : undefined}>
        <a class="skip" href="#main">Skip to content</a>
        {props.own ? <OwnHeader site={props.own} /> : (
          <header>
            <a href="/" class="brand">{SITE_NAME}</a>
            <Nav viewer={viewer} path={props.path} />
          </header>
        )}
        <main id="main">{props.children}</main>
        {props.own
          ? (
            <footer>
              <p>
                A status page kept on <a href="/">{SITE_NAME}</a>.
              </p>
            </footer>
          )
          : <SiteFooter />}
      </body>
    </html>
  );
}

const FOOTER_LINKS: [string, string][] = [
  ["/api-reference", "API reference"],
  ["/catalogue", "All modules"],
  ["/sitemap.xml", "Site map"],
];

function SiteFooter() {
  return (
    <footer>
      <ul>
        <LinkItems links={FOOTER_LINKS} />
      </ul>
    </footer>
  );
}
