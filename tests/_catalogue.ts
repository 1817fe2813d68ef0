import { type ModuleInput, putModule } from "../kv/catalogue/modules.ts";
import type { TestApp } from "./_helpers.ts";

/** A module as the owner's import would write it, for catalogue tests. */
export function sampleModule(slug: string, over: Partial<ModuleInput> = {}): ModuleInput {
  return {
    slug,
    title: "Pond life through the seasons",
    who: "Primary classes, ages 8 to 11",
    lede: "Children sample a school pond four times a year.",
    about: "A year-long outdoor module with dip nets and magnifiers.",
    note: "",
    meta: "",
    state: "development",
    track: "outdoor",
    area: "nature-based",
    by: "Grete Olsen",
    facts: [["Duration", "4 sessions"]],
    gets: ["A species list"],
    ...over,
  };
}

export async function seedModule(
  t: TestApp,
  slug: string,
  contributors: number[],
  opts: { published?: boolean; over?: Partial<ModuleInput> } = {},
) {
  return await putModule(
    t.kv,
    sampleModule(slug, opts.over),
    contributors,
    opts.published ?? true,
    { actor: "owner", now: t.clock.now() },
  );
}
