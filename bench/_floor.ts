/**
 * The floor of `deno task bench`: the least a server on this project's stack does before its
 * first answer (configuration validated by zod, the KV opened, a Hono route reading KV), with
 * none of the service's routes. Its cold start and idle memory show how much of the service's
 * figures the mandated stack itself costs.
 */
import { Hono } from "hono";
import { openKv } from "../kv/_atomic.ts";
import { envRecord, loadConfig } from "../lib/config.ts";

const config = loadConfig(envRecord());
const kv = await openKv(config.kvPath);
const app = new Hono();
app.get("/api/healthz", async (c) => {
  let migrations = 0;
  for await (const _ of kv.list({ prefix: ["migrations"] })) migrations++;
  return c.json({ ok: true, db: "ok", migrations });
});

Deno.serve({
  port: config.port,
  hostname: config.hostname,
  onListen: ({ hostname, port }) => console.log(`listening on http://${hostname}:${port}`),
}, app.fetch);
