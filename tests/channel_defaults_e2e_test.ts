/**
 * A channel added after the services, end to end (issue 44): the real server process (main.ts
 * as `deno task start` runs it), a local SMTP relay and a signed HTTPS receiver on 127.0.0.1.
 * Two heartbeats are watched before any channel exists; a webhook channel is added later through
 * the API. "Apply to all my services" makes the existing ones alert it, and a service added
 * afterwards without naming channels alerts it too ("use for new services", on by default).
 * Each is proved by its off alert arriving at the receiver, signed, after a cron line's
 * `curl .../fail`; a service created with `channels: []` alerts by mail only.
 */
import assert from "node:assert/strict";
import { alertBench, arrival, bearerApi, cronPing, signInByMail } from "./_real_server.ts";
import { spawnService } from "./_server.ts";
import { hmacSignature, type ReceivedPost, webhookReceiver } from "./_servers.ts";

const EMAIL = "ops@example.org";
/** A failure ping's alert leaves within seconds (docs/api.md); a loaded machine adds some. */
const WITHIN_MS = 30_000;

Deno.test("channels e2e: a channel added later reaches the existing services when applied to all, and new services by default", async () => {
  await using bench = await alertBench("channel_defaults_e2e_", EMAIL);
  await using receiver = webhookReceiver(bench.certs);
  await using server = await spawnService(bench.kvPath, bench.env);
  const token = await signInByMail(server.url, bench.sink, EMAIL);
  const api = bearerApi(server.url, token);
  // Each alert on its own, at once.
  await api("PATCH", "/api/me/alert-settings", { grouping: false });
  const hookOf = (made: { hook_url: string }) => `${server.url}${new URL(made.hook_url).pathname}`; // the server's real port
  const watch = async (name: string, more: Record<string, unknown> = {}) => {
    const made = await api("POST", "/api/me/services", { name, check: "webhook:", ...more });
    await cronPing(hookOf(made), 0); // its first run went well
    return { id: made.item.id as number, name, hook: hookOf(made), item: made.item };
  };

  // Before any channel: the services alert by mail only.
  const backup = await watch("Nightly backup");
  const export_ = await watch("Weekly export");
  assert.deepEqual(backup.item.channels, []);

  // The channel comes later: it is used for new services (the default), and no service alerts
  // it yet.
  const added = await api("POST", "/api/me/channels", { name: "Pager", url: receiver.url });
  const channel = added.item;
  assert.equal(channel.for_new_services, true);
  assert.equal(channel.services, 0);
  assert.deepEqual(await api("POST", `/api/me/channels/${channel.id}/apply`, {}), {
    ok: true,
    services: 2,
    added: 2,
  });
  const listed = await api("GET", "/api/me/channels");
  assert.equal(listed.items[0].services, 2);

  // A service added now names no channels and gets it; one that says [] does not.
  const sync = await watch("Mirror sync");
  assert.deepEqual(sync.item.channels, [channel.id]);
  const quiet = await watch("Scratch job", { channels: [] });
  assert.deepEqual(quiet.item.channels, []);

  const offPost = (name: string) =>
    arrival<ReceivedPost>(
      `"${name}" off post`,
      () => receiver.posts,
      (p) => p.body.event === "off" && p.body.service?.name === name,
      WITHIN_MS,
    );
  const offMail = (name: string) =>
    arrival(
      `"${name}" off mail`,
      () => bench.sink.mails,
      (m) => m.to === EMAIL && m.subject === `Watched service "${name}" is off`,
      WITHIN_MS,
    );
  for (const s of [backup, export_, sync, quiet]) await cronPing(s.hook, "fail");
  const posts = await Promise.all([backup, export_, sync].map((s) => offPost(s.name)));
  for (const post of posts) {
    assert.equal(post.signature, await hmacSignature(added.secret, post.raw));
  }
  // The service that named no channel by choice: its mail came, no post.
  await offMail(quiet.name);
  await Promise.all([backup, export_, sync].map((s) => offMail(s.name)));
  assert.ok(
    !receiver.posts.some((p) => p.body.service?.name === quiet.name),
    "no post for a service created with channels: []",
  );
  assert.equal(receiver.posts.filter((p) => p.body.event === "off").length, 3);
});
