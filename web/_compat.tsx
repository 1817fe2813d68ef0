/** A heartbeat's addresses for other products' clients, on its page (web/_me_service_page.tsx). */
import { PostButton } from "./_layout.tsx";

/**
 * "Use with Healthchecks clients" on a heartbeat's page: its /ping addresses, the ping key's
 * state, its POST-only setting, the Management API's address and its check id, and its Uptime
 * Kuma push address (made here, shown once).
 */
export function CompatSection(
  props: { base: string; id: number; uuid: string; slug: string; post: boolean; keyMade: boolean },
) {
  const ping = `${props.base}/ping/`;
  return (
    <section aria-labelledby="hc-clients">
      <h2 id="hc-clients">Use with Healthchecks clients</h2>
      <p>
        Tools made for Healthchecks (runitor, its Terraform and Ansible modules, the curl lines of
        its documentation) ping this heartbeat here: change only their base address.
      </p>
      <dl>
        <dt>Ping URL</dt>
        <dd>
          <code>{ping}{props.uuid}</code>
        </dd>
        <dt>By slug</dt>
        <dd>
          <code>{ping}&lt;ping key&gt;/{props.slug || "<slug>"}</code>{" "}
          {props.keyMade ? "(your account's ping key)" : "(make a ping key first)"}
        </dd>
        <dt>Signals</dt>
        <dd>
          add <code>/start</code>, <code>/fail</code>, <code>/log</code> or{" "}
          <code>/&lt;exit status&gt;</code>; <code>?rid=&lt;uuid&gt;</code>{" "}
          pairs a start with its end
        </dd>
        <dt>Methods</dt>
        <dd>
          {props.post ? "POST only (other pings are recorded as ignored)" : "HEAD, GET and POST"}
        </dd>
        <dt>Management API</dt>
        <dd>
          <code>{props.base}/api/v3/</code> with a key from{" "}
          <a href="/me/api-keys">API keys</a>; this heartbeat's check id (uuid) there is{" "}
          <code>{props.uuid}</code>
        </dd>
        <dt>Uptime Kuma push</dt>
        <dd>
          <code>{props.base}/api/push/&lt;push token&gt;?status=up&amp;msg=OK&amp;ping=</code>
        </dd>
      </dl>
      <ul class="inline actions">
        <li>
          <a href="/me/ping-key">{props.keyMade ? "Ping key" : "Make a ping key"}</a>
        </li>
        <li>
          <PostButton
            action={`/me/services/${props.id}/methods`}
            kind="secondary"
            fields={{ methods: props.post ? "" : "POST" }}
            block
          >
            {props.post ? "Take any method" : "Take POST pings only"}
          </PostButton>
        </li>
        <li>
          <PostButton
            action={`/me/services/${props.id}/push`}
            kind="secondary"
            confirm="An older push address of this heartbeat stops at once. Continue?"
            block
          >
            New push address
          </PostButton>
        </li>
      </ul>
    </section>
  );
}
