/**
 * Materials: a contributor attaches a public file of the service's storage and a link to a
 * module; the page lists them with their kind and size, the JSON-LD has them as `hasPart` and
 * the file as `encoding`, the feed as an enclosure. A private file or another account's is
 * refused in words; a published proposal's files arrive as links.
 */
import assert from "node:assert/strict";
import { seedModule } from "./_catalogue.ts";
import { testApp } from "./_helpers.ts";

const pdf = new TextEncoder().encode("%PDF-1.4\n" + "x".repeat(2000));

async function put(t: Awaited<ReturnType<typeof testApp>>, token: string, pub: boolean) {
  const r = await t.req("PUT", "/api/me/files", {
    token,
    raw: pdf,
    headers: {
      "content-length": String(pdf.length),
      "x-file-name": "pond-sheet.pdf",
      "x-file-label": encodeURIComponent("Pond worksheet"),
      ...(pub ? { "x-public": "1" } : {}),
    },
  });
  assert.ok(r.status === 200 || r.status === 201, r.text);
  return (r.body.item ?? r.body.file ?? r.body) as { url: string; size: number };
}

Deno.test("materials: a public file and a link on the page, in JSON-LD and in the feed", async () => {
  await using t = await testApp();
  const grete = await t.account("grete@example.org", { name: "Grete", roles: ["contributor"] });
  const other = await t.account("olaf@example.org", { name: "Olaf", roles: ["contributor"] });
  await seedModule(t, "pond-life", [grete.account.id]);
  const file = await put(t, grete.token, true);
  const hidden = await put(t, grete.token, false);
  const foreign = await put(t, other.token, true);

  const patch = (token: string, materials: unknown) =>
    t.req("PATCH", "/api/me/modules/pond-life", { token, body: { materials } });
  for (
    const [materials, re] of [
      [[{ url: hidden.url }], /private/],
      [[{ url: foreign.url }], /no file of yours/],
      [[{ url: "http://plain.example/a.pdf" }], /https/],
    ] as const
  ) {
    const r = await patch(grete.token, materials);
    assert.equal(r.status, 400, r.text);
    assert.equal(r.body.field, "materials");
    assert.match(r.body.error, re);
  }
  const ok = await patch(grete.token, [
    { url: file.url },
    { label: "Species key", url: "https://keys.example/pond" },
  ]);
  assert.equal(ok.status, 200, ok.text);
  assert.deepEqual(ok.body.item.materials, [
    { label: "Pond worksheet", url: file.url, type: "application/pdf", size: pdf.length },
    { label: "Species key", url: "https://keys.example/pond", type: null, size: null },
  ]);

  const page = await t.req("GET", "/modules/pond-life");
  assert.match(page.text, /<h2>Materials<\/h2>/);
  assert.match(page.text, new RegExp(`<a href="${file.url}"><bdi>Pond worksheet</bdi></a>`));
  assert.match(page.text, /PDF, 2 KB/);
  assert.match(page.text, /Link to keys\.example/);
  const ld = JSON.parse(
    page.text.match(/<script type="application\/ld\+json">([^<]*)<\/script>/)![1],
  );
  assert.deepEqual(ld.hasPart.map((p: { id: string }) => p.id), [
    `http://test.local${file.url}`,
    "https://keys.example/pond",
  ]);
  assert.deepEqual(ld.encoding, [{
    type: "MediaObject",
    contentUrl: `http://test.local${file.url}`,
    encodingFormat: "application/pdf",
    contentSize: String(pdf.length),
  }]);
  const feed = (await t.req("GET", "/feed")).text;
  assert.match(
    feed,
    new RegExp(`<link rel="enclosure" href="http://test.local${file.url}" type="application/pdf"`),
  );
  // The file the page links is served to anyone.
  assert.equal((await t.req("GET", file.url)).status, 200);
});

Deno.test("materials: a published proposal's files become links on the module", async () => {
  await using t = await testApp();
  const ada = await t.account("ada@example.org", { name: "Ada" });
  const owner = await t.account("olga@example.org", { name: "Olga", roles: ["owner"] });
  const r = await t.req("POST", "/api/contributions", {
    token: ada.token,
    body: {
      name: "Ada",
      email: "ada@example.org",
      title: "Engines for beginners",
      summary: "About engines.",
      files: [{ label: "Notes", url: "https://example.org/notes.pdf" }],
    },
  });
  assert.equal(r.status, 201, r.text);
  for (const status of ["reviewing", "published"]) {
    const p = await t.req("PATCH", `/api/contributions/${r.body.id}`, {
      token: owner.token,
      body: { status, reason: "Good" },
    });
    assert.equal(p.status, 200, p.text);
  }
  const page = await t.req("GET", "/modules/engines-for-beginners");
  assert.match(page.text, /<a href="https:\/\/example.org\/notes.pdf"><bdi>Notes<\/bdi><\/a>/);
});
