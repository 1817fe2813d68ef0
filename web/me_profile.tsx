/**
 * The profile (/me/profile): name and profile fields with the API's schema
 * (http/account_inputs.ts ProfilePatch, kv/accounts/profile.ts updateProfile), and the picture: upload
 * (a multipart form, capped at the API's size before it is read) and removal (kv/files/avatars.ts).
 */
import { type Account, avatarUrl } from "../kv/accounts/accounts.ts";
import {
  MAX_AVATAR_BYTES,
  MAX_AVATAR_PIXELS,
  prepareAvatar,
  removeAvatar,
  setAvatar,
} from "../kv/files/avatars.ts";
import { DomainError } from "../lib/errors.ts";
import { catalogueChanged } from "../kv/catalogue/catalogue_doc.ts";
import { PROFILE_ROLES, updateProfile } from "../kv/accounts/profile.ts";
import type { Deps } from "../lib/deps.ts";
import { ProfilePatchBody } from "../http/account_inputs.ts";
import { fail, statusOf } from "../http/errors.ts";
import { emptyView, type FormView, readBody, submitForm } from "./_form.tsx";
import { fields } from "./_form_controls.tsx";
import { PostButton } from "./_layout.tsx";
import { MeNav } from "./_me.tsx";
import {
  AVATAR_FORM_LIMIT,
  capBody,
  formLimit,
  requireAccount,
  seeOther,
  webRouter,
} from "./_web.tsx";

const LABELS = {
  name: "Name",
  org: "Organisation",
  role: "Role",
  about: "About you (one paragraph)",
  bio: "Longer biography",
  place: "Place",
  contact: "Public contact address",
  website: "Website",
  langs: "Languages",
};

const valuesOf = (a: Account): FormView["values"] => ({
  name: a.name,
  org: a.profile.org,
  role: a.profile.role,
  about: a.profile.about,
  bio: a.profile.bio,
  place: a.profile.place,
  contact: a.profile.contact,
  website: a.profile.website,
  langs: a.profile.langs.join(" "),
});

/** What the picture field says when a picture is refused, by the kind of refusal. */
const PICTURE_ERRORS: Record<string, string> = {
  unsupported: "This file is not a picture this site takes. Choose a PNG, JPEG or GIF file.",
  too_large: `The picture is too large: at most 10 MB and ${
    (MAX_AVATAR_PIXELS / 1e6).toLocaleString("en")
  } million pixels. Choose a smaller one.`,
  invalid: "This picture could not be read (it may be damaged or cut short). Try another file.",
};
const NO_PICTURE = "Choose a picture file first.";

function ProfilePage(
  props: { me: Account; view: FormView; saved?: boolean; pictureError?: string },
) {
  const { me, view } = props;
  const F = fields(view, LABELS, ProfilePatchBody);
  const pic = avatarUrl(me);
  return (
    <>
      <MeNav here="/me/profile" viewer={me} />
      <h1>Profile</h1>
      {props.saved ? <p class="notice" role="status">Saved.</p> : null}
      <p>
        With a name, your profile is public{me.slug
          ? (
            <>
              {" at "}
              <a href={`/people/${me.slug}`}>/people/{me.slug}</a>
            </>
          )
          : null}; an empty field stays hidden.
      </p>
      <form method="post" action="/me/profile" novalidate>
        <F.Summary />
        <F.Field name="name" autocomplete="name" maxlength={120} />
        <F.Field name="org" autocomplete="organization" />
        <F.Select
          name="role"
          options={[["", "Not given"], ...PROFILE_ROLES.map((r) => [r, r] as [string, string])]}
        />
        <F.TextArea name="about" rows={3} maxlength={280} />
        <F.TextArea name="bio" rows={6} maxlength={4000} />
        <F.Field name="place" />
        <F.Field name="contact" type="email" />
        <F.Field name="website" type="url" hint="An https:// address." />
        <F.Field
          name="langs"
          hint="Two-letter codes separated by spaces, e.g. en de fr."
          maxlength={100}
        />
        <button type="submit">Save profile</button>
      </form>

      <h2>Picture</h2>
      {pic
        ? <img class="avatar" src={pic} alt="Your current picture" width={96} height={96} />
        : <p>No picture yet.</p>}
      <form method="post" action="/me/avatar" enctype="multipart/form-data">
        {props.pictureError
          ? (
            <div class="errors" role="alert" tabindex={-1} id="errors">
              <h2>The picture was not saved</h2>
              <ul>
                <li>
                  <a href="#f-avatar">Picture file</a>: {props.pictureError}
                </li>
              </ul>
            </div>
          )
          : null}
        <div class={props.pictureError ? "field invalid" : "field"}>
          <label for="f-avatar">Picture file</label>
          <p class="hint" id="f-avatar-hint">PNG, JPEG or GIF up to 10 MB; shown at 256 × 256.</p>
          {props.pictureError
            ? <p class="error" id="f-avatar-error">{props.pictureError}</p>
            : null}
          <input
            id="f-avatar"
            type="file"
            name="avatar"
            accept="image/png,image/jpeg,image/gif,.png,.jpg,.jpeg,.gif"
            aria-describedby={props.pictureError ? "f-avatar-hint f-avatar-error" : "f-avatar-hint"}
            aria-invalid={props.pictureError ? "true" : undefined}
            required
          />
        </div>
        <button type="submit">Upload picture</button>
      </form>
      {pic
        ? (
          <PostButton
            action="/me/avatar/remove"
            kind="secondary"
            confirm="Remove your picture?"
            block
          >
            Remove picture
          </PostButton>
        )
        : null}
    </>
  );
}

export function profilePages(deps: Deps) {
  const app = webRouter();

  app.get("/me/profile", (c) => {
    const me = requireAccount(c);
    return c.render(
      <ProfilePage me={me} view={emptyView(valuesOf(me))} saved={c.req.query("saved") === "1"} />,
      { title: "Profile", noindex: true },
    );
  });

  app.post("/me/profile", async (c) => {
    const me = requireAccount(c);
    return await submitForm(c, {
      schema: ProfilePatchBody,
      input: (f) => {
        const langs = (f.langs ?? "").split(/[\s,]+/).filter(Boolean);
        return {
          name: f.name ?? "",
          org: f.org ?? "",
          role: f.role ?? "",
          about: f.about ?? "",
          bio: f.bio ?? "",
          place: f.place ?? "",
          contact: f.contact ?? "",
          website: f.website ?? "",
          langs: langs.length ? langs : "",
        };
      },
      act: async (patch) => {
        const next = await updateProfile(deps.kv, me.id, patch, deps.clock.now());
        if (!next) fail(401, "sign in again");
        if (next.name !== me.name) await catalogueChanged(deps);
        return "/me/profile?saved=1";
      },
      show: (view) => <ProfilePage me={me} view={view} />,
      page: { title: "Profile" },
    });
  });

  // A refused picture: the profile page again, the message beside the picture field.
  // the picture's cap, answered beside its field: the route caps its own stream.
  app.post("/me/avatar", formLimit("own"), async (c) => {
    const me = requireAccount(c);
    let refused: string;
    try {
      // The picture's cap plus the multipart envelope; over it, nothing more is read.
      capBody(c, AVATAR_FORM_LIMIT);
      const file = (await readBody(c)).avatar;
      if (!(file instanceof File) || file.size === 0) fail(400, NO_PICTURE);
      if (file.size > MAX_AVATAR_BYTES) fail(413, PICTURE_ERRORS.too_large);
      const pic = await prepareAvatar(new Uint8Array(await file.arrayBuffer()));
      await setAvatar(deps.kv, me.id, pic, deps.clock.now());
      return seeOther(c, "/me/profile?saved=1");
    } catch (err) {
      const status = statusOf(err);
      if (status !== 400 && status !== 413 && status !== 415) throw err;
      refused = err instanceof DomainError
        ? PICTURE_ERRORS[err.kind] ?? PICTURE_ERRORS.invalid
        : (err as Error).message;
      c.status(status as 400);
    }
    c.header("Cache-Control", "no-store");
    return c.render(
      <ProfilePage me={me} view={emptyView(valuesOf(me))} pictureError={refused} />,
      { title: "Profile", noindex: true },
    );
  });

  app.post("/me/avatar/remove", async (c) => {
    const me = requireAccount(c);
    await removeAvatar(deps.kv, me.id);
    return seeOther(c, "/me/profile");
  });

  return app;
}
