/**
 * `replay --print-curl`: the replay as shell commands (curl for HTTP, a pipe into the command for stdio),
 * to run or adapt by hand. Credentials given with --header appear as placeholders, never as given.
 */
import type { Message } from "./channel.js";
import { isStateless, statelessHeaders, withStatelessMeta } from "./stateless.js";
import type { SessionPlan } from "./session.js";
import { FALLBACK_PROTOCOL_VERSION } from "./session.js";
import { shellQuote } from "../util/shell-quote.js";

export interface CurlTarget {
  transport: "streamable-http" | "http+sse" | "stdio";
  /** HTTP: the server's URL (legacy: its stream). */
  url: string | null;
  /** stdio: the command. */
  command: string[] | null;
  /** Names of the --header options given (their values are never printed). */
  headerNames: string[];
}

export { shellQuote };

export function curlCommands(target: CurlTarget, plan: SessionPlan): string {
  const initialize: Message = {
    jsonrpc: "2.0",
    id: plan.id === 0 ? 1 : 0,
    method: "initialize",
    params: { protocolVersion: plan.protocolVersion ?? FALLBACK_PROTOCOL_VERSION, capabilities: plan.capabilities ?? {}, clientInfo: plan.clientInfo },
  };
  const initialized: Message = { jsonrpc: "2.0", method: "notifications/initialized" };
  const call: Message = { jsonrpc: "2.0", id: plan.id, method: plan.method, ...(plan.params !== undefined ? { params: plan.params } : {}) };
  const credentials = target.headerNames.map((name) => `-H ${shellQuote(`${name}: <${name}>`)}`);
  if (target.transport === "stdio") {
    const lines = [initialize, initialized, call].map((m) => shellQuote(JSON.stringify(m))).join(" ");
    return `# the server reads one message a line; its answers are the lines it writes\nprintf '%s\\n' ${lines} | ${(target.command ?? ["<command>"]).map(shellQuote).join(" ")}\n`;
  }
  const url = target.url!;
  const base = ["curl -sS", ...credentials];
  if (target.transport === "http+sse") {
    return [
      "# 1. open the event stream (in another terminal): its `endpoint` event names where to POST; answers arrive on it",
      [...base, "-N", "-H 'accept: text/event-stream'", shellQuote(url)].join(" "),
      "ENDPOINT='<the endpoint event, resolved against the stream URL>'",
      ...[initialize, initialized, call].map((m, i) => `# ${i + 2}. ${String(m.method)}\n${[...base, "-X POST", "-H 'content-type: application/json'", shellQuote(JSON.stringify(m)).replace(/^/, "--data-raw "), '"$ENDPOINT"'].join(" ")}`),
      "",
    ].join("\n");
  }
  const post = (m: Message, extra: string[]): string =>
    [...base, "-X POST", "-H 'content-type: application/json'", "-H 'accept: application/json, text/event-stream'", ...extra, `--data-raw ${shellQuote(JSON.stringify(m))}`, shellQuote(url)].join(" ");
  if (isStateless(plan.protocolVersion)) {
    const params = withStatelessMeta(plan.params ?? {}, plan.protocolVersion!, plan.clientInfo);
    const message = { ...call, params };
    const headers = Object.entries(statelessHeaders(message)).map(([k, v]) => `-H ${shellQuote(`${k}: ${v}`)}`);
    return `# the stateless revision: one request, no session\n${post(message, headers)}\n`;
  }
  const version = plan.protocolVersion ?? FALLBACK_PROTOCOL_VERSION;
  const session = ["-H \"mcp-session-id: $SESSION\"", ...(version >= "2025-06-18" ? [`-H 'mcp-protocol-version: ${version}'`] : [])];
  return [
    "# 1. initialize: the answer's Mcp-Session-Id header names the session",
    `SESSION=$(${post(initialize, ["-D -", "-o /dev/null"])} | tr -d '\\r' | sed -n 's/^mcp-session-id: //Ip')`,
    "# 2. notifications/initialized",
    post(initialized, session),
    `# 3. ${plan.method}`,
    post(call, session),
    "# 4. end the session",
    [...base, "-X DELETE", ...session, shellQuote(url)].join(" "),
    "",
  ].join("\n");
}
