import type { IncomingHttpHeaders } from "node:http";
import { mediaTypeOf, parseJsonText } from "../../body/index.js";
import type { BodyProblemName, CapturedBody } from "./capture.js";
import { isPlainObject } from "../../util/plain-object.js";

/** The request body as name → value, from a form or a JSON object; undefined when it is neither. */
export function parseRequestBody(body: CapturedBody, headers: IncomingHttpHeaders): Record<string, unknown> | undefined {
  const media = mediaTypeOf(headers["content-type"]);
  if (media === "application/x-www-form-urlencoded") {
    // A cut-off form still names its parameters; only whitelisted values are ever copied.
    const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (const [name, value] of new URLSearchParams(body.text)) {
      const previous = out[name];
      if (previous === undefined) out[name] = value;
      else out[name] = Array.isArray(previous) ? [...previous, value] : [previous, value];
    }
    return out;
  }
  if (body.truncated || body.problem) return undefined;
  // JSON-RPC bodies land here too: skip the parse unless an OAuth member is named at all.
  if (!body.text.includes('"grant_type"') && !body.text.includes('"redirect_uris"')) return undefined;
  const parsed = parseJsonText(body.text);
  return parsed.ok && isPlainObject(parsed.value) ? parsed.value : undefined;
}

export function parseResponseBody(body: CapturedBody): { value?: Record<string, unknown>; problem?: BodyProblemName } {
  if (body.truncated || body.problem) return {};
  if (body.text.trim() === "") return { problem: "not_json" };
  const parsed = parseJsonText(body.text);
  if (!parsed.ok) return { problem: body.text.trimStart().startsWith("{") ? "invalid_json" : "not_json" };
  return isPlainObject(parsed.value) ? { value: parsed.value } : { problem: "not_json" };
}
