/**
 * The profile (/me/profile): name and profile fields with the API's schema
 * (http/account_inputs.ts ProfilePatch, kv/profile.ts updateProfile), and the picture: upload
 * (a multipart form, capped at the API's size before it is read) and removal (kv/avatars.ts).
 */
import { type Account, avatarUrl } from "../kv/accounts.ts";
import { MAX_AVATAR_BYTES, prepareAvatar, removeAvatar, setAvatar } from "../kv/avatars.ts";
import { catalogueChanged } from "../kv/catalogue_doc.ts";
import { PROFILE_ROLES, updateProfile } from "../kv/profile.ts";
import type { Deps } from "../lib/deps.ts";
import { ProfilePatch } from "../http/account_inputs.ts";
import { fail } from "../http/errors.ts";
import { emptyView, fields, type FormView, submitForm } from "./_form.tsx";
import { MeNav } from "./_me.tsx";
import { requireAccount, seeOther, webRouter } from "./_web.tsx";

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

function ProfilePage(props: { me: Account; view: FormView; saved?: boolean }) {
  const { me, view } = props;
  const F = fields(view, LABELS);
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
        <F.Field name="langs" hint="Two-letter codes separated by spaces, e.g. en de fr." />
        <button type="submit">Save profile</button>
      </form>

      <h2>Picture</h2>
      {pic
        ? <img class="avatar" src={pic} alt="Your current picture" width={96} height={96} />
        : <p>No picture yet.</p>}
      <form method="post" action="/me/avatar" enctype="multipart/form-data">
        <div class="field">
          <label for="f-avatar">Picture file</label>
          <p class="hint" id="f-avatar-hint">PNG, JPEG or GIF up to 10 MB; shown at 256 × 256.</p>
          <input
            id="f-avatar"
            type="file"
            name="avatar"
            accept="image/png,image/jpeg,image/gif"
            aria-describedby="f-avatar-hint"
            required
          />
        </div>
        <button type="submit">Upload picture</button>
      </form>
      {pic
        ? (
          <form method="post" action="/me/avatar/remove" data-confirm="Remove your picture?">
            <button type="submit" class="secondary">Remove picture</button>
          </form>
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
      schema: ProfilePatch,
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

  app.post("/me/avatar", async (c) => {
    const me = requireAccount(c);
    const declared = Number(c.req.header("content-length") ?? "0");
    // The multipart envelope adds a little to the picture's own limit.
    if (declared > MAX_AVATAR_BYTES + 64 * 1024) fail(413, "the picture is over 10 MB");
    const body = await c.req.parseBody();
    const file = body.avatar;
    if (!(file instanceof File) || file.size === 0) {
      fail(400, "choose a picture file first");
    }
    if (file.size > MAX_AVATAR_BYTES) fail(413, "the picture is over 10 MB");
    const pic = await prepareAvatar(new Uint8Array(await file.arrayBuffer()));
    await setAvatar(deps.kv, me.id, pic, deps.clock.now());
    return seeOther(c, "/me/profile?saved=1");
  });

  app.post("/me/avatar/remove", async (c) => {
    const me = requireAccount(c);
    await removeAvatar(deps.kv, me.id);
    return seeOther(c, "/me/profile");
  });

  return app;
}
