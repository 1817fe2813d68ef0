import { httpRequest } from "./_http.ts";
import { bySpeed, type Checker } from "./_probe.ts";

const BODY_LIMIT = 64 * 1024;

/** The JSON-RPC answer with id 1 inside a JSON body or an event stream. */
function findAnswer(body: string, type: string): unknown {
  if (/text\/event-stream/i.test(type)) {
    for (const event of body.split(/\r?\n\r?\n/)) {
      const data = event.split(/\r?\n/).filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).replace(/^ /, "")).join("\n");
      if (!data) continue;
      try {
        const msg = JSON.parse(data);
        if (msg?.id === 1) return msg;
      } catch { /* an incomplete event */ }
    }
    return undefined;
  }
  try {
    const msg = JSON.parse(body);
    return Array.isArray(msg) ? msg.find((m) => m?.id === 1) : msg;
  } catch {
    return undefined;
  }
}

/**
 * mcp: the streamable-HTTP `initialize` exchange. A valid InitializeResult is ok (warn when
 * slow); 401/403 warns (the server is up but wants credentials); anything else is off.
 */
export const mcpCheck: Checker = async (p) => {
  // Loaded on the first MCP check, not at start: the SDK would cost every start time and memory
  // (docs/performance.md, "Start-up and the request path").
  const { InitializeResultSchema, LATEST_PROTOCOL_VERSION } = await import(
    "@modelcontextprotocol/sdk/types.js"
  );
  const t0 = p.now();
  const ans = await httpRequest(p.deps, {
    address: p.address,
    url: p.target.url!,
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "Accept": "application/json, text/event-stream",
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: LATEST_PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: "service-watch", version: "1" },
      },
    }),
    bodyLimit: BODY_LIMIT,
    enough: (body) => findAnswer(body, "text/event-stream") !== undefined,
  }, p.track);
  if (ans.status === 401 || ans.status === 403) {
    return { state: "warn", status: `MCP server wants credentials (HTTP ${ans.status})` };
  }
  if (ans.status < 200 || ans.status >= 300) {
    return { state: "off", status: `MCP initialize answered HTTP ${ans.status}` };
  }
  const msg = findAnswer(ans.body, ans.headers.get("content-type") ?? "") as
    | { result?: unknown; error?: { message?: unknown } }
    | undefined;
  if (!msg) return { state: "off", status: "no MCP answer to initialize" };
  if (msg.error) return { state: "off", status: "MCP initialize answered an error" };
  const parsed = InitializeResultSchema.safeParse(msg.result);
  if (!parsed.success) return { state: "off", status: "not a valid MCP InitializeResult" };
  const ms = Math.round(p.now() - t0);
  const session = ans.headers.get("mcp-session-id");
  if (session && /^[\x21-\x7e]{1,200}$/.test(session)) {
    // A stateful server opened a session for us: end it (MCP streamable HTTP says a client
    // SHOULD), or every check every few minutes would leave one more behind. Best effort, to
    // the same checked address; it does not change the result.
    await httpRequest(p.deps, {
      address: p.address,
      url: p.target.url!,
      method: "DELETE",
      headers: {
        "Mcp-Session-Id": session,
        "MCP-Protocol-Version": parsed.data.protocolVersion,
      },
      bodyLimit: 1024,
    }, p.track).catch(() => {});
  }
  const info = parsed.data.serverInfo;
  return bySpeed(
    ms,
    `MCP ${info.name} ${info.version}, protocol ${parsed.data.protocolVersion}, in ${ms} ms`,
  );
};
