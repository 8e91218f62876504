/**
 * What every replay front end (the CLI's `replay`, the web UI's Replay) builds the same way from a captured
 * call: the session plan (the captured handshake, the client named as a replay) and where the call goes.
 */
import { VERSION } from "../util/package-info.js";
import { UsageError } from "../util/usage-error.js";
import type { Message } from "./channel.js";
import type { CapturedCall } from "./selection.js";
import type { SessionPlan } from "./session.js";

export function sessionPlan(call: CapturedCall, params: Record<string, unknown> | undefined, input?: Record<string, unknown>): SessionPlan {
  return {
    id: call.id,
    method: call.method,
    params,
    protocolVersion: call.protocolVersion,
    capabilities: call.clientCapabilities,
    clientInfo: replayClientInfo(call),
    ...(input !== undefined ? { input } : {}),
  };
}

/** Who the replay says it is: marked as a replay, naming the capture's client. */
function replayClientInfo(call: CapturedCall): Message {
  const captured = call.clientInfo && typeof call.clientInfo.name === "string" ? ` (captured client: ${call.clientInfo.name}${typeof call.clientInfo.version === "string" ? ` ${call.clientInfo.version}` : ""})` : "";
  return { name: "mcp-wiretap-replay", version: VERSION, title: `mcp-wiretap replay of ${call.selector}${captured}` };
}

/** The URL an HTTP call is replayed to: the captured one, or `--server`. */
export function targetUrl(call: CapturedCall, server: string | undefined): URL {
  const text = server ?? call.url;
  let url: URL;
  try {
    url = new URL(text ?? "");
  } catch {
    throw new UsageError(server ? `--server ${server}: not a URL (https://host[:port]/path)` : `${call.selector}: the capture does not say where the request went: give --server URL`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") throw new UsageError(`--server ${server}: only http and https`);
  if (url.username || url.password) throw new UsageError("--server: put credentials in --header, not in the URL");
  return url;
}
