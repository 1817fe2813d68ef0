import { createApp } from "./app.ts";
import { DAILY, MINUTELY, runJobs } from "./jobs/mod.ts";
import { openKv } from "./kv/_atomic.ts";
import { runMigrations } from "./kv/migrations.ts";
import { systemClock } from "./lib/clock.ts";
import { ConfigError, envRecord, loadConfig } from "./lib/config.ts";
import type { Deps } from "./lib/deps.ts";
import { createMailer } from "./lib/mail.ts";
import { systemConnector, systemResolver, systemTls } from "./lib/net.ts";

async function start(): Promise<Deps> {
  const config = loadConfig(envRecord());
  const kv = await openKv(config.kvPath);
  await runMigrations(kv, systemClock.now());
  return {
    kv,
    clock: systemClock,
    mailer: createMailer(config),
    resolver: systemResolver,
    connector: systemConnector,
    tls: systemTls(),
    config,
  };
}

const ready = start().catch((err) => {
  console.error(err instanceof ConfigError ? err.message : err);
  Deno.exit(1);
});

// Deno Deploy wants cron jobs registered at the top level of the main module.
Deno.cron("minutely jobs", "* * * * *", async () => runJobs(await ready, MINUTELY));
Deno.cron("daily jobs", "17 3 * * *", async () => runJobs(await ready, DAILY));

const deps = await ready;
const app = createApp(deps);
Deno.serve({
  port: deps.config.port,
  hostname: deps.config.hostname,
  onListen: ({ hostname, port }) =>
    console.log(`listening on http://${hostname}:${port} (mail: ${deps.mailer.kind})`),
}, app.fetch);
