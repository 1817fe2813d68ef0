/**
 * An incident through the real server process (issue 47, item 2): the owner's status page with
 * a follower confirmed through the mailed link; an incident opened and taken through four
 * updates to resolved; each update reaches the follower as a mail through the SMTP relay, with
 * its own unfollow link, in order; the unfollow link works and the next update mails nobody.
 */
import assert from "node:assert/strict";
import { alertBench, arrival, bearerApi, outboxDrained, signInByMail } from "./_real_server.ts";
import { spawnService } from "./_server.ts";

const OWNER = "ops@incidents-e2e.test";
const FAN = "fan@incidents-e2e.test";

const tokenIn = (text: string, what: "confirm" | "unfollow") => {
  const m = text.match(new RegExp(`/status/[a-z0-9-]+/${what}\\?token=([0-9]+\\.[A-Za-z0-9_-]+)`));
  if (!m) throw new Error(`no ${what} link in: ${text}`);
  return m[1];
};

Deno.test({
  name: "e2e: an incident with four updates mails each to the follower, who can unfollow",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    await using bench = await alertBench("incidents_e2e_", OWNER);
    const { sink } = bench;
    await using server = await spawnService(bench.kvPath, bench.env);
    const token = await signInByMail(server.url, sink, OWNER);
    const api = bearerApi(server.url, token);
    const shop = (await api("POST", "/api/me/services", {
      name: "Webshop",
      check: "webhook:",
      interval: 60,
    })).item;
    const named = await api("PATCH", "/api/me", { name: "Rita Ops" });
    await api("PUT", "/api/me/status-page", {
      enabled: true,
      title: "Riverside",
      services: [{ id: shop.id }],
    });
    const slug = named.slug ?? named.account?.slug ?? (await api("GET", "/api/me")).slug;
    const post = (path: string, body: unknown) =>
      fetch(`${server.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
    const fanMails = () => sink.mails.filter((m) => m.to === FAN);
    assert.equal((await post(`/api/status/${slug}/follow`, { email: FAN })).status, 202);
    const confirmMail = await arrival("the confirm mail", fanMails, () => true, 20_000);
    const confirmed = await post(`/api/status/${slug}/confirm`, {
      token: tokenIn(confirmMail.text, "confirm"),
    });
    assert.equal(confirmed.status, 200, await confirmed.text());

    const opened = await api("POST", "/api/me/incidents", {
      title: "Checkout fails",
      services: [shop.id],
      impact: "major",
      text: "Payments fail for some people; we are looking.",
    });
    const id = opened.item.id;
    for (
      const [state, text] of [
        ["identified", "The provider's certificate expired."],
        ["monitoring", "A new certificate is in place; watching."],
        ["resolved", "Payments work again for everyone."],
      ]
    ) {
      await api("POST", `/api/me/incidents/${id}/updates`, { state, text });
    }
    const updates = () => fanMails().filter((m) => m.subject.includes("Checkout fails"));
    await arrival("four update mails", () => [updates()], (l) => l.length >= 4, 30_000);
    assert.deepEqual(updates().map((m) => m.subject), [
      "Riverside: Investigating: Checkout fails",
      "Riverside: Identified: Checkout fails",
      "Riverside: Monitoring: Checkout fails",
      "Riverside: Resolved: Checkout fails",
    ]);
    assert.match(updates()[1].text, /certificate expired/);
    const unfollows = updates().map((m) => tokenIn(m.text, "unfollow"));
    assert.equal(new Set(unfollows).size, 4, "each mail its own unfollow link");
    const item = (await api("GET", `/api/me/incidents/${id}`)).item;
    assert.equal(item.state, "resolved");
    assert.equal(item.updates.length, 4);

    // Unfollowed through the last mail's link: the next update mails nobody.
    const left = await post(`/api/status/${slug}/unfollow`, { token: unfollows[3] });
    assert.equal(left.status, 200, await left.text());
    await api("POST", `/api/me/incidents/${id}/updates`, {
      state: "monitoring",
      text: "Watching a while longer.",
    });
    // The update's followers' delivery is queued with it: once the outbox is empty, any mail
    // it made has reached the relay.
    await outboxDrained(server.url);
    assert.equal(updates().length, 4, "no mail after unfollowing");
  },
});
