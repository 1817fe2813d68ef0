/**
 * The actions of a service's page (/me/services/<id>) and its pause or resume button; the routes
 * they post to are web/me_service.tsx's.
 */
import type { ServiceView } from "../kv/service/commands.ts";
import { PostButton } from "./_layout.tsx";

/**
 * What can be done to the service, in one place: check now or pause, maintenance, a new hook
 * address (heartbeats), delete.
 */
export function ServiceActions({ s }: { s: ServiceView }) {
  const hb = s.kind === "webhook";
  return (
    <section aria-labelledby="actions" class="panel">
      <h2 id="actions">Actions</h2>
      <ul class="inline actions">
        <PauseButton service={s} />
        {hb || s.paused ? null : (
          <li>
            <PostButton action={`/me/services/${s.id}/check`} kind="secondary">
              Check now
            </PostButton>
          </li>
        )}
        <li>
          <a href="/me/maintenance" class="button secondary">Plan maintenance</a>
        </li>
        <li>
          <a href={`/me/reports?service=${s.id}`} class="button secondary">Uptime report</a>
        </li>
        {hb
          ? (
            <li>
              <PostButton
                action={`/me/services/${s.id}/rotate`}
                kind="secondary"
                confirm="The old hook address stops at once. Continue?"
              >
                New hook address
              </PostButton>
            </li>
          )
          : null}
        <li>
          <PostButton
            action={`/me/services/${s.id}/delete`}
            kind="danger"
            confirm="Stop watching this service?"
          >
            Delete service
          </PostButton>
        </li>
      </ul>
    </section>
  );
}

/** Pause or resume a service of any kind: one button, what it does said beside it. */
function PauseButton({ service: s }: { service: ServiceView }) {
  const hb = s.kind === "webhook";
  const what = hb ? "heartbeat" : "checks";
  return (
    <li>
      <PostButton
        action={`/me/services/${s.id}/${s.paused ? "resume" : "pause"}`}
        kind="secondary"
        block
        hint={{
          id: `pause-${s.id}`,
          text: s.paused
            ? hb
              ? " Watched again from now on: lateness counts from the resume."
              : " Checked again at once, then at its interval."
            : hb
            ? " While paused: no alerts, no lateness, no missing runs."
            : " While paused: not checked, no alerts.",
        }}
      >
        {s.paused ? `Resume ${what}` : `Pause ${what}`}
      </PostButton>
    </li>
  );
}
