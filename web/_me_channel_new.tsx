/**
 * The form that adds a channel of one kind (/me/channels/new/:kind): its name, the kind's own
 * fields with their help, and which services alert it.
 */
import { isOwner } from "../kv/accounts/accounts.ts";
import { CHANNEL_KINDS, type FieldSpec, type KindSpec } from "../lib/channels/mod.ts";
import { addChannel, channelsInUse } from "../kv/service/commands.ts";
import type { Deps } from "../lib/deps.ts";
import { fail } from "../http/errors.ts";
import { z } from "zod";
import { oneLineField } from "../http/text.ts";
import { emptyView, type FormView, submitForm } from "./_form.tsx";
import { ErrorSummary, Field, Select, TextArea } from "./_form_controls.tsx";
import { MeNav } from "./_me.tsx";
import { requireAccount, type WebCtx } from "./_web.tsx";
import { type Shown, showOnChannels, USE_DEFAULTS, UseFields, useInput } from "./_me_channels.tsx";

const NewChannel = z.object({ name: oneLineField(80).min(2) });

/** The form of one kind: the channel's name, then the kind's own fields with their help. */
const newChannelPage = async (
  deps: Deps,
  c: WebCtx,
  spec: KindSpec,
  view: FormView = emptyView(USE_DEFAULTS),
) => {
  const me = requireAccount(c);
  const { services } = await channelsInUse(deps.kv, me.id);
  const labels = Object.fromEntries([
    ["name", "Channel name"],
    ...spec.fields.map((f) => [f.name, f.label]),
  ]);
  return (
    <>
      <MeNav here="/me/services" viewer={me} />
      <h1>Add a {spec.label} channel</h1>
      <p>{spec.about}</p>
      <form method="post" action={`/me/channels/new/${spec.kind}`} novalidate>
        <ErrorSummary view={view} labels={labels} />
        <Field name="name" label="Channel name" view={view} maxlength={80} required />
        {spec.fields.map((f) => <KindField f={f} view={view} />)}
        <UseFields view={view} services={services} />
        <p class="hint">
          Tokens, keys and addresses marked secret are stored encrypted and never shown again.
        </p>
        <button type="submit">Add {spec.label} channel</button>
      </form>
      <p>
        <a href="/me/channels">All channels</a>
      </p>
    </>
  );
};

function KindField({ f, view }: { f: FieldSpec; view: FormView }) {
  const label = f.optional ? `${f.label} (optional)` : f.label;
  const hint = f.secret ? `${f.help} Secret: never shown again.` : f.help;
  if (f.type === "textarea") {
    return <TextArea name={f.name} label={label} view={view} hint={hint} maxlength={f.max} />;
  }
  if (f.type === "select") {
    return <Select name={f.name} label={label} view={view} hint={hint} options={f.options ?? []} />;
  }
  return (
    <Field
      name={f.name}
      label={label}
      view={view}
      hint={hint}
      maxlength={f.max}
      required={!f.optional}
      type={f.secret && f.type === "text" ? "password" : f.type === "url" ? "url" : "text"}
      autocomplete="off"
    />
  );
}

const kindParam = (c: WebCtx): KindSpec => {
  const spec = CHANNEL_KINDS[c.req.param("kind") ?? ""];
  if (!spec) fail(404, "no such kind of channel");
  return spec;
};

export async function getMeChannelsNew(deps: Deps, c: WebCtx) {
  const spec = kindParam(c);
  return c.render(await newChannelPage(deps, c, spec), {
    title: `Add a ${spec.label} channel`,
    noindex: true,
  });
}

export async function postMeChannelsNew(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const spec = kindParam(c);
  let made: Shown | null = null;
  const res = await submitForm(c, {
    schema: NewChannel,
    act: async (input, form) => {
      const ch = await addChannel(
        deps,
        me.id,
        { ...form, ...input, kind: spec.kind, ...useInput(form) },
        isOwner(me),
      );
      made = { name: ch.item.name, secret: ch.shownSecret, services: ch.item.services };
      return "/me/channels";
    },
    show: (view) => newChannelPage(deps, c, spec, view),
    page: { title: `Add a ${spec.label} channel` },
  });
  // The secret is shown after the redirect, from this session's flash.
  return made ? await showOnChannels(deps, c, made) : res;
}
