/**
 * What a channel's input may hold: an Apprise address's credentials are refused, never dropped
 * (the address would be used without them), and a webhook's body template is bounded in what
 * it expands to (placeholders, `$JSON` once), at saving and at sending.
 */
import assert from "node:assert/strict";
import { fromApprise } from "../lib/channels/apprise.ts";
import { fillTemplate, MAX_PLACEHOLDERS } from "../lib/channels/webhook.ts";
import { addChannel, GROUPED, OFF, receiver, send } from "./_channels.ts";

Deno.test("Apprise: credentials in an address are refused, a kind's own token still read", async () => {
  for (
    const url of [
      "jsons://user:pass@hooks.example.org/in",
      "json://user@hooks.example.org/in",
      "gotifys://admin:secret@gotify.example.org/AppTok",
      "mmosts://bot@chat.example.org/Tok3n",
      "ntfys://user:pass@ntfy.example.org/alerts",
      "matrixs://user:pass@matrix.example.org/!room:example.org",
    ]
  ) {
    const got = fromApprise(url);
    assert.ok("error" in got, url);
    assert.match(got.error, /credentials in the address are refused/, url);
  }
  // A token where the kind takes one is not a credential of the address.
  assert.deepEqual(fromApprise("ntfys://tk_AbC@ntfy.example.org/alerts"), {
    kind: "ntfy",
    fields: { url: "https://ntfy.example.org/alerts", token: "tk_AbC" },
  });
  // Through the API: 400 said of the URL, nothing stored.
  await using r = await receiver();
  const { token } = await r.t.account("ops@example.org");
  const bad = await r.t.req("POST", "/api/me/channels", {
    token,
    body: { name: "Hook", apprise: "jsons://user:pass@hooks.example.org/in" },
  });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.field, "apprise");
  assert.match(bad.body.error, /^apprise: jsons:\/\/ with a user or password/);
  assert.equal((await r.t.req("GET", "/api/me/channels", { token })).body.items.length, 0);
});

Deno.test("webhook templates: at most 20 placeholders and $JSON once; what is sent stays bounded", async () => {
  await using r = await receiver();
  const { token } = await r.t.account("ops@example.org");
  const url = "https://hooks.example.org/alerts";
  for (
    const [template, why] of [
      ["$JSON".repeat(800), "template: at most 20 placeholders"],
      ['{"a": $JSON, "b": $JSON}', "template: $JSON at most once"],
      ["$NAME ".repeat(21), "template: at most 20 placeholders"],
    ]
  ) {
    const res = await r.t.req("POST", "/api/me/channels", {
      token,
      body: { name: "Hook", url, template },
    });
    assert.equal(res.status, 400, template.slice(0, 30));
    assert.deepEqual(res.body, { error: why, field: "template" });
  }
  const ok = await addChannel(r.t, token, {
    name: "Hook",
    url,
    template: `{"text": "$NAME is $STATE: $STATUS", "all": $JSON}`,
  });
  await send(r.t, ok, GROUPED);
  const body = JSON.parse(r.last().body);
  assert.equal(body.all.event, "off");
  assert.match(body.text, /^LAN is Off: Backup: off/);
  // A template kept before the bound fills 20 placeholders and one $JSON, no more.
  const filled = fillTemplate("$JSON".repeat(800), OFF, true);
  assert.ok(filled.length < 4000 + 2000, `${filled.length} characters`);
  const many = fillTemplate("$NAME,".repeat(100), OFF, false);
  assert.equal(many.split("Backup").length - 1, MAX_PLACEHOLDERS);
});
