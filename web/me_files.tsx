/**
 * Files (/me/files): upload with a progress bar (web/static/upload.js sends the raw bytes to
 * POST /me/files/upload, streamed into storage by kv/files/files.ts uploadFile, as PUT
 * /api/me/files), the list with sizes and the used/quota bar, public toggle, label, rename,
 * delete, the public link to copy, and the owner's own download of a private file.
 */
import {
  changeFile,
  deleteFile,
  fileUrl,
  getFile,
  getUsage,
  listFiles,
  MAX_FILE,
  MAX_LABEL,
  QUOTA,
  type StoredFile,
  uploadFile,
} from "../kv/files/files.ts";
import { RULES } from "../kv/store/rate_limit.ts";
import type { Deps } from "../lib/deps.ts";
import { Patch, serveFile, uploadOf } from "../http/files.ts";
import { fail, statusOf } from "../http/errors.ts";
import { limit } from "../http/guards.ts";
import { emptyView, type FormView, readForm, submitForm } from "./_form.tsx";
import { ErrorSummary, Field } from "./_form_controls.tsx";
import { AfterDot, CopyField, PostButton, UserText } from "./_layout.tsx";
import { bytes, MeNav, Purpose, when } from "./_me.tsx";
import { formLimit, requireAccount, routeId, seeOther, type WebCtx, webRouter } from "./_web.tsx";
import { FILE_KINDS } from "../lib/file_kinds.ts";
import { DomainError } from "../lib/errors.ts";

/** Every accepted ending, as the page lists them. */
const ENDINGS = Object.keys(FILE_KINDS).map((e) => `.${e}`).join(", ");

/**
 * What the files page says when an upload is refused: the API's message names headers
 * ("X-File-Name: ...") and JSON fields ("accepted lists the endings"); a person gets the
 * endings themselves and the field as the page names it.
 */
function uploadRefusal(err: Error): string {
  if (err instanceof DomainError && err.kind === "unsupported") {
    const ext = typeof err.extra.ext === "string" ? err.extra.ext : null;
    return (ext
      ? `Files ending in .${ext} are not accepted.`
      : "The file's name needs an ending that tells its kind, such as .pdf or .png.") +
      ` Accepted endings: ${ENDINGS}.`;
  }
  const text = err.message.replace(/^X-File-Name: /, "File name: ")
    .replace(/^X-File-Label: /, "Title: ");
  const t = text.charAt(0).toUpperCase() + text.slice(1);
  return /[.!?]$/.test(t) ? t : `${t}.`;
}

const listPage = async (deps: Deps, c: WebCtx, errors?: { id: number; view: FormView }) => {
  const me = requireAccount(c);
  const [files, usage] = await Promise.all([listFiles(deps.kv, me.id), getUsage(deps.kv, me.id)]);
  const uploaded = c.req.query("uploaded") === "1";
  return (
    <>
      <MeNav here="/me/files" viewer={me} />
      <h1>Files</h1>
      <Purpose here="/me/files" />
      {uploaded ? <p class="notice" role="status">Uploaded.</p> : null}
      <p>
        <label for="space">Space used</label>{" "}
        <meter id="space" min={0} max={QUOTA} value={usage.bytes}>
          {bytes(usage.bytes)}
        </meter>{" "}
        {bytes(usage.bytes)} of {bytes(QUOTA)} · {usage.files} file(s)
      </p>
      <h2>Upload a file</h2>
      <UploadForm />
      <h2>Your files</h2>
      {files.length === 0 ? <p>No files yet.</p> : null}
      <ul class="files">
        {files.map((f) => (
          <FileRow
            f={f}
            link={`${originOf(deps)}${fileUrl(f)}`}
            open={errors?.id === f.id}
            view={errors && errors.id === f.id
              ? errors.view
              : emptyView({ name: f.name, label: f.label })}
          />
        ))}
      </ul>
    </>
  );
};

/** The upload form (web/static/upload.js sends the file; the button waits for it). */
function UploadForm() {
  return (
    <form
      method="post"
      action="/me/files/upload"
      data-upload
    >
      <div class="field">
        <label for="f-file">File</label>
        <p class="hint" id="f-file-hint">
          Up to{" "}
          {bytes(MAX_FILE)}. The ending of the file's name (.pdf, .png, …) tells its kind; files
          with other endings are refused.
        </p>
        <input id="f-file" type="file" name="file" aria-describedby="f-file-hint" />
        <details>
          <summary>Which endings are accepted?</summary>
          <p>{ENDINGS}.</p>
        </details>
      </div>
      <div class="field">
        <label for="f-label">Title (optional)</label>
        <input id="f-label" type="text" name="label" maxlength={MAX_LABEL} />
      </div>
      <div class="field check">
        <input id="f-public" type="checkbox" name="public" />
        <label for="f-public">Public: anyone with the link can open it</label>
      </div>
      <p data-needs-js class="hint">Uploading needs JavaScript in this browser.</p>
      <button type="submit" disabled>Upload</button>
      <progress hidden aria-label="Upload progress" value={0} max={1}></progress>
      <p data-upload-status role="status" aria-live="polite"></p>
    </form>
  );
}

/** One file of the list: its link, public link, visibility, delete and rename forms. */
function FileRow(
  { f, link, open, view }: { f: StoredFile; link: string; open: boolean; view: FormView },
) {
  return (
    <li>
      <h3>
        <a href={`/me/files/${f.id}/${encodeURIComponent(f.name)}`}>
          <UserText>{f.name}</UserText>
        </a>
      </h3>
      <p class="meta">
        {bytes(f.size)} · {f.public ? "public" : "private"} · {when(f.created)}
        <AfterDot text={f.label} />
      </p>
      {f.public
        ? (
          <CopyField
            id={`link-${f.id}`}
            label={`Public link of ${f.name}`}
            value={link}
            copy={`Copy link of ${f.name}`}
          />
        )
        : null}
      <PostButton
        action={`/me/files/${f.id}/visibility`}
        kind="secondary"
        fields={{ public: f.public ? "false" : "true" }}
      >
        {f.public ? `Make ${f.name} private` : `Make ${f.name} public`}
      </PostButton>{" "}
      <PostButton action={`/me/files/${f.id}/delete`} kind="danger" confirm={`Delete ${f.name}?`}>
        Delete {f.name}
      </PostButton>
      <details open={open}>
        <summary>Rename or retitle {f.name}</summary>
        <form method="post" action={`/me/files/${f.id}`} novalidate>
          <ErrorSummary view={view} />
          <Field
            name="name"
            label={`New name of ${f.name}`}
            view={view}
            maxlength={1000}
            required
          />
          <Field
            name="label"
            label={`Title of ${f.name}`}
            view={view}
            maxlength={MAX_LABEL}
          />
          <button type="submit">Save {f.name}</button>
        </form>
      </details>
    </li>
  );
}

/** The service's own origin (BASE_URL's). */
const originOf = (deps: Deps) => new URL(deps.config.baseUrl).origin;

async function getMeFiles(deps: Deps, c: WebCtx) {
  return c.render(await listPage(deps, c), {
    title: "Files",
    noindex: true,
    scripts: ["upload.js"],
  });
}

async function postMeFilesUpload(deps: Deps, c: WebCtx) {
  const origin = c.req.header("origin");
  if (!origin || (origin !== originOf(deps) && origin !== new URL(c.req.url).origin)) {
    return c.json({ error: "this upload was not sent from this site" }, 403);
  }
  const me = c.get("account");
  if (!me) return c.json({ error: "sign in again" }, 401);
  try {
    const up = uploadOf((name) => c.req.header(name));
    await limit(deps, RULES.upload, me.id);
    await uploadFile(deps, me.id, { ...up, body: c.req.raw.body });
    return c.json({ ok: true, next: "/me/files?uploaded=1" }, 201);
  } catch (err) {
    const status = statusOf(err);
    if (!status) throw err;
    // The rest of a refused body is not read.
    await c.req.raw.body?.cancel().catch(() => {});
    return c.json({ error: uploadRefusal(err as Error) }, status as 400);
  }
}

async function getMeFilesIdName(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  return await serveFile(
    deps,
    { account: me.id, file: routeId(c), name: c.req.param("name")! },
    me.id,
    c.req.raw,
  );
}

async function postMeFilesId(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const id = routeId(c);
  return await submitForm(c, {
    schema: Patch,
    input: (f) => ({ name: f.name ?? "", label: f.label ?? "" }),
    act: async (p) => {
      await changeFile(deps, me.id, id, p);
      return "/me/files";
    },
    show: (view) => listPage(deps, c, { id, view }),
    page: { title: "Files" },
  });
}

async function postMeFilesIdVisibility(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const form = await readForm(c);
  await changeFile(deps, me.id, routeId(c), { public: form.public === "true" });
  return seeOther(c, "/me/files");
}

async function postMeFilesIdDelete(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  if (!(await getFile(deps.kv, me.id, routeId(c))).value) fail(404, "no such file");
  await deleteFile(deps.kv, me.id, routeId(c), deps.clock.now());
  return seeOther(c, "/me/files");
}

export function filePages(deps: Deps) {
  const app = webRouter();

  app.get("/me/files", (c) => getMeFiles(deps, c));

  // The upload itself: a fetch from the files page, so JSON answers; the Origin must be ours
  // (hono/csrf only looks at form content types, and this body is not one).
  // a fetch, not a form: it reads its own stream with the API's caps.
  app.post("/me/files/upload", formLimit("own"), (c) => postMeFilesUpload(deps, c));

  app.get("/me/files/:id{[0-9]{1,15}}/:name", (c) => getMeFilesIdName(deps, c));

  app.post("/me/files/:id{[0-9]{1,15}}", (c) => postMeFilesId(deps, c));

  app.post("/me/files/:id{[0-9]{1,15}}/visibility", (c) => postMeFilesIdVisibility(deps, c));

  app.post("/me/files/:id{[0-9]{1,15}}/delete", (c) => postMeFilesIdDelete(deps, c));

  return app;
}
