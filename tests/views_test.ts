import assert from "node:assert/strict";
import { z } from "zod";
import { type Account, accountView, actorView, emptyProfile } from "../kv/accounts/accounts.ts";
import { type Application, applicationView } from "../kv/accounts/applications.ts";
import { AccountSchema, ActorSchema, ApplicationStateSchema } from "../http/schemas.ts";
import { T0 } from "./_helpers.ts";

/**
 * The domain's views (kv/) are what the API answers: each must match its schema in
 * http/schemas.ts exactly, no field missing and none extra.
 */
const account: Account = {
  id: 7,
  kind: "email",
  email: "ada@example.org",
  name: "Ada",
  slug: "ada",
  created: T0,
  roles: ["contributor"],
  profile: { ...emptyProfile(), org: "Analytical", langs: ["en"] },
  avatar: { etag: "0123456789abcdef0123", type: "image/png", updated: T0 },
  application: null,
};

const application: Application = {
  id: 3,
  account: 7,
  text: "I would like to contribute modules.",
  created: T0,
  outcome: "approved",
  reason: "welcome",
  decided: T0 + 1000,
  decided_by: "service",
};

const cases: [string, z.ZodObject, unknown][] = [
  ["actorView", ActorSchema, actorView(account)],
  ["accountView", AccountSchema, accountView(account)],
  ["accountView without avatar", AccountSchema, accountView({ ...account, avatar: null })],
  ["applicationView", ApplicationStateSchema, applicationView(application)],
  [
    "applicationView undecided",
    ApplicationStateSchema,
    applicationView({ ...application, outcome: null, reason: null, decided: null }),
  ],
];

for (const [name, schema, view] of cases) {
  Deno.test(`views: ${name} matches its API schema exactly`, () => {
    const parsed = schema.strict().safeParse(view);
    assert.ok(parsed.success, `${name}: ${parsed.error?.message}`);
    assert.deepEqual(
      Object.keys(view as object).sort(),
      Object.keys(schema.shape).sort(),
      `${name}: fields`,
    );
  });
}

Deno.test("views: accountView shows the avatar address with its hash", () => {
  assert.equal(accountView(account).avatar, "/api/avatars/7?v=0123456789ab");
  assert.equal(accountView({ ...account, avatar: null }).avatar, null);
  assert.equal(actorView(account).created, "2026-03-02T09:00:00.000Z");
});
