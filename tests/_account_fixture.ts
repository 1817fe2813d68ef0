import assert from "node:assert/strict";
import { Image } from "imagescript";
import type { Res, TestApp } from "./_helpers.ts";

/**
 * One account's things made through the API, for the tests that then look for every trace of
 * it (tests/data_rights_test.ts export and erasure, tests/erasure_test.ts): each value holds
 * a made-up word that occurs nowhere else, so a scan of the KV can find it.
 */

/** The made-up words of what the fixture's steps write (lower-case), common to every test. */
export const MADE_UP = [
  "quuxley",
  "zorbulon",
  "frobnicat",
  "wibblewobble",
  "plonkton",
  "splendiferous",
  "clandestine",
  "marmalade",
];

export const ADA = { name: "Adelaide Quuxley", email: "adelaide@example.org" };

export const ok = (r: Res, status = 200) => assert.equal(r.status, status, r.text);

/** A watched heartbeat ("Zorbulon backup", "Frobnicating dump") that beat once with `status`. */
export async function heartbeatWith(t: TestApp, token: string, status: string) {
  const svc = await t.req("POST", "/api/me/services", {
    token,
    body: { name: "Zorbulon backup", check: "webhook:", what: "Frobnicating dump" },
  });
  ok(svc);
  ok(await t.req("POST", new URL(svc.body.hook_url).pathname, { body: { status } }));
}

/** A stored file, quuxley-notes.txt ("Wibblewobble file bytes"); answers its bytes. */
export async function storeNotes(t: TestApp, token: string): Promise<Uint8Array> {
  const bytes = new TextEncoder().encode("Wibblewobble file bytes");
  ok(
    await t.req("PUT", "/api/me/files", {
      token,
      raw: bytes,
      headers: {
        "content-length": String(bytes.length),
        "x-file-name": "quuxley-notes.txt",
        "content-type": "text/plain",
      },
    }),
    201,
  );
  return bytes;
}

/** A proposal by the signed-in account with its own address: confirmed at once; its id. */
export async function propose(
  t: TestApp,
  token: string,
  title: string,
  o: { attribution?: string; area?: string; summary?: string; trail?: string } = {},
): Promise<number> {
  const p = await t.req("POST", "/api/contributions", {
    token,
    body: {
      ...ADA,
      title,
      area: o.area ?? "technical",
      summary: o.summary ?? `Summary of ${title}`,
      attribution: o.attribution ?? "keep",
      ...(o.trail === undefined ? {} : { trail: o.trail }),
    },
  });
  ok(p, 201);
  assert.equal(p.body.status, "confirmed");
  return p.body.id as number;
}

/** The owner takes a proposal through review to published. */
export async function publish(t: TestApp, ownerToken: string, id: number) {
  for (const [status, reason] of [["reviewing"], ["admitted", "Fine"], ["published", "Go"]]) {
    ok(
      await t.req("PATCH", `/api/contributions/${id}`, {
        token: ownerToken,
        body: { status, reason },
      }),
    );
  }
}

/** A tool request through the public form, from the account's address. */
export async function requestTool(t: TestApp, text: string) {
  ok(await t.req("POST", "/api/requests", { body: { ...ADA, kind: "tool", text } }), 202);
}

/** The inviter's invitation to the account's address, accepted through the mailed link. */
export async function acceptInvitation(t: TestApp, inviterToken: string, message: string) {
  ok(
    await t.req("POST", "/api/me/invites", {
      token: inviterToken,
      body: { email: ADA.email, message },
    }),
    201,
  );
  const v = await t.req("GET", `/api/verify?token=${t.mail.linkToken(ADA.email)}`);
  ok(v);
  return { id: v.body.actor.id as number, token: v.body.token as string };
}

/** Every profile field filled (Zorbulon, Frobnicating, Wibblewobble, Plonkton), and a picture. */
export async function fillProfile(t: TestApp, token: string) {
  ok(
    await t.req("PATCH", "/api/me", {
      token,
      body: {
        name: ADA.name,
        org: "Zorbulon Institute",
        about: "Frobnicating widgets",
        bio: "Biography of Wibblewobble",
        place: "Plonkton",
        contact: "shown@quuxley.example",
        website: "https://quuxley.example/",
        langs: ["en"],
      },
    }),
  );
  const png = await new Image(40, 40).fill(0x336699ff).encode();
  ok(
    await t.req("POST", "/api/me/avatar", {
      token,
      raw: png as Uint8Array<ArrayBuffer>,
      headers: { "content-type": "image/png" },
    }),
  );
}

/** A public journal entry with `text`, and a private one ("Clandestine private note"). */
export async function writeJournal(t: TestApp, token: string, text: string) {
  ok(await t.req("POST", "/api/me/journal", { token, body: { text } }), 201);
  ok(
    await t.req("POST", "/api/me/journal", {
      token,
      body: { text: "Clandestine private note", public: false },
    }),
    201,
  );
}

/** An application with `text`, approved by the team: the account becomes a contributor. */
export async function approvedApplication(t: TestApp, token: string, text: string) {
  const app = await t.req("POST", "/api/me/apply", { token, body: { text } });
  ok(app, 202);
  ok(
    await t.req("PATCH", `/api/applications/${app.body.application.id}`, {
      headers: { "x-service-token": t.deps.config.serviceToken! },
      body: { outcome: "approved", reason: "Quite right" },
    }),
  );
}

/** The account invites dora@example.org with `message`. */
export async function inviteDora(t: TestApp, token: string, message: string) {
  ok(
    await t.req("POST", "/api/me/invites", {
      token,
      body: { email: "dora@example.org", message },
    }),
    201,
  );
}
