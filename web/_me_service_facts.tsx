/**
 * What a service's page (/me/services/<id>) says about the service: its top (is it fine, since
 * when, when is it next due, the ways it alerts), the one address a heartbeat pings with its
 * lines, and what it is (kind, target, group and the rest, under "Edit settings").
 */
import { periodWords, timingSentence } from "../lib/timing_words.ts";
import { Fact } from "./_fact.tsx";
import { unreachableWords } from "../kv/service/dependencies.ts";
import type { Service, ServiceView } from "../kv/service/commands.ts";
import { shownState } from "../kv/service/state.ts";
import { CopyField, UserText } from "./_layout.tsx";
import { AlertWays, NobodyTold, resultText, StateBadge } from "./_state.tsx";
import { Ago, Due } from "./_me.tsx";
import { KIND_LABELS, ScheduleHelp, SignalLines } from "./_service_form.tsx";

const ms = (s: string | null) => (s ? Date.parse(s) : null);

/** The top of the page: is it fine, since when, and when is it next due. */
export function ServiceTop(
  { s, found, now, via, next, channels }: {
    s: ServiceView;
    found: Service;
    now: number;
    via: string[];
    next: number | null;
    channels: { name: string; kind: string }[];
  },
) {
  const hb = s.kind === "webhook";
  const state = via.length ? "unreachable" : shownState(s);
  const last = ms(hb ? s.beat : s.checked);
  return (
    <dl class="top-facts">
      <div>
        <dt>State</dt>
        <dd>
          <StateBadge state={state} />{" "}
          <span class="since">
            since <Ago at={found.since ?? found.created} now={now} />
          </span>
          {via.length ? <UserText>{` ${unreachableWords(via)}`}</UserText> : null}
        </dd>
      </div>
      <div>
        <dt>{hb ? "Expected" : "Checked"}</dt>
        <dd>{hb ? timingSentence(s) : periodWords(s)}</dd>
      </div>
      <div>
        <dt>{hb ? "Last ping" : "Last check"}</dt>
        <dd>
          {last === null ? (hb ? "none yet" : "not checked yet") : <Ago at={last} now={now} />}
        </dd>
      </div>
      <div>
        <dt>{hb ? "Next expected" : "Next check"}</dt>
        <dd>
          {next !== null
            ? <Due at={next} now={now} />
            : s.paused
            ? "none while paused"
            : "one period after its first ping"}
        </dd>
      </div>
      <div>
        <dt>Alerts</dt>
        <dd>
          {s.alerts
            ? (
              <>
                <AlertWays alerts channels={channels} />{" "}
                <UserText>{["mail", ...channels.map((c) => c.name)].join(", ")}</UserText>
              </>
            )
            : <NobodyTold alerts={false} />}
        </dd>
      </div>
      {resultText(s)
        ? (
          <div>
            <dt>Last result</dt>
            <dd>
              <UserText>{resultText(s)}</UserText>
              {/* The check's words may say its time already, as the events show them. */}
              {s.ms !== null && !/\d ms\b/.test(s.status) ? ` (${s.ms} ms)` : ""}
            </dd>
          </div>
        )
        : null}
    </dl>
  );
}

/**
 * The one address a heartbeat's job pings (Healthchecks' `/ping/<uuid>`), with the lines for a
 * success, a start, a failure and an exit code. The hook address shown once at creation, the
 * ping key's slug address and Uptime Kuma's push reach the same service (their section below).
 */
export function PingPart({ url }: { url: string }) {
  return (
    <section aria-labelledby="ping-h" class="panel ping">
      <h2 id="ping-h">Ping this address</h2>
      <p class="hint">
        Your job calls it when it has run. Add <code>/start</code> when it begins,{" "}
        <code>/fail</code> when it failed, or its exit code (<code>/0</code> is success).
      </p>
      <CopyField id="ping-url" label="Ping address" value={url} row />
      <details>
        <summary>Lines for your job</summary>
        <SignalLines hook={url} only={PING_LINES} />
        <ScheduleHelp />
      </details>
    </section>
  );
}

/** Success, a start, a failure and an exit code: SIGNALS' lines a ping address needs. */
const PING_LINES = [0, 1, 3, 4];

/** What the service is: its kind, target, group and the rest that does not change by itself. */
export function ServiceFacts({ s, now }: { s: ServiceView; now: number }) {
  return (
    <dl class="facts">
      <dt>Kind</dt>
      <dd>{KIND_LABELS[s.kind] ?? s.kind}</dd>
      <Fact term="Target" show={s.target_hint}>
        <UserText>{s.target_hint}</UserText>
      </Fact>
      <Fact term="Certificate expires" show={s.cert_expires}>
        <Ago at={ms(s.cert_expires)} now={now} />
      </Fact>
      <dt>Group</dt>
      <dd>
        <UserText>{s.group}</UserText>
      </dd>
      <Fact term="Place" show={s.place}>
        <UserText>{s.place}</UserText>
      </Fact>
      <Fact term="Tags" show={s.tags.length}>
        <UserText>{s.tags.join(" ")}</UserText>
      </Fact>
      <dt>Added</dt>
      <dd>
        <Ago at={ms(s.created)} now={now} />
      </dd>
    </dl>
  );
}
