/**
 * A heartbeat's hook address (/me/services/<id>/hook), shown once after adding the service or
 * renewing the address (a flash of the session), with a copy button and the lines for a job.
 */
import type { Child } from "hono/jsx";
import { getService } from "../kv/service/commands.ts";
import type { Deps } from "../lib/deps.ts";
import { fail } from "../http/errors.ts";
import { CopyField, UserText } from "./_layout.tsx";
import { MeNav } from "./_me.tsx";
import { requireAccount, routeId, type WebCtx } from "./_web.tsx";
import { readSessionFlash } from "./_session.ts";
import { type HookFlash, hookFlash, ScheduleHelp, SignalLines, SIGNALS } from "./_service_form.tsx";

function HookShown(props: { url: string; intro: Child }) {
  return (
    <section aria-labelledby="hook-h" class="notice">
      <h2 id="hook-h">Hook address</h2>
      <p>
        {props.intro}{" "}
        It is shown on this page for 15 minutes and never again: copy it now. Anyone who has it can
        report for this service.
      </p>
      <CopyField id="hook-url" label="Hook address" value={props.url} copy="Copy hook address" />
      <h3>Lines for your job</h3>
      <p class="hint">
        Call the first line when your job has run, e.g. in crontab:{" "}
        <code>0 3 * * * /usr/local/bin/backup.sh && {SIGNALS[0].line(props.url)}</code>. The others
        report more; use the ones you need.
      </p>
      <SignalLines hook={props.url} />
      <ScheduleHelp />
    </section>
  );
}

/** The page after adding a heartbeat or renewing its address: the address and its lines. */
export async function getMeServicesIdHook(deps: Deps, c: WebCtx) {
  const me = requireAccount(c);
  const id = routeId(c);
  const found = (await getService(deps.kv, me.id, id)).value;
  if (!found) fail(404, "no such service");
  const hook = await readSessionFlash<HookFlash>(deps, c, hookFlash(id));
  c.header("Cache-Control", "no-store");
  return c.render(
    <>
      <MeNav here="/me/services" viewer={me} />
      <h1>
        {hook?.made === "renewed" ? "New hook address for " : "Added "}
        <UserText>{found.name}</UserText>
      </h1>
      {hook
        ? (
          <HookShown
            url={hook.url}
            intro={hook.made === "renewed"
              ? "The old address no longer works: put this one in your job."
              : "Your job calls this address when it has run."}
          />
        )
        : (
          <p>
            The hook address was shown for 15 minutes after it was made and is no longer kept. If
            you did not copy it, make a new one with "New hook address" on the service's page.
          </p>
        )}
      <p>
        <a href={`/me/services/${id}`}>Go to the service</a> ·{" "}
        <a href="/me/services">All services</a>
      </p>
    </>,
    { title: hook?.made === "renewed" ? "New hook address" : "Service added", noindex: true },
  );
}
