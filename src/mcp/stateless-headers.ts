import { PROTOCOL_VERSION_META_KEY } from "./jsonrpc.js";
import { isPlainObject } from "../util/plain-object.js";
import type { HeaderMismatch } from "./rpc-event.js";
import type { IncomingHttpHeaders } from "node:http";

/** Methods whose target the 2026-07-28 revision repeats in `Mcp-Name`, and where it sits in params. */
const NAMED = new Map([
  ["tools/call", "name"],
  ["prompts/get", "name"],
  ["resources/read", "uri"],
]);

/** The first revision that requires the mirrored headers; revisions are dates, so later ones sort after it. */
export const STATELESS_REVISION = "2026-07-28";

/**
 * The stateless revision repeats the method, its target and the protocol version in request headers, so
 * that gateways can route without reading bodies. A header that disagrees with the body is how a
 * request smuggles past such a gateway: report every disagreement. Under that revision (by header or
 * `_meta`) a missing `Mcp-Method`, or `Mcp-Name` where the method has a target, is one too (headerValue
 * null): the server refuses it (-32020) and a gateway would route it blind.
 */
export function headerMismatches(headers: IncomingHttpHeaders, raw: unknown): HeaderMismatch[] | undefined {
  if (!isPlainObject(raw) || typeof raw.method !== "string") return undefined;
  const params = isPlainObject(raw.params) ? raw.params : {};
  const versionHeader = decodeHeader(headers["mcp-protocol-version"]);
  const meta = isPlainObject(params._meta) ? params._meta[PROTOCOL_VERSION_META_KEY] : undefined;
  const methodHeader = decodeHeader(headers["mcp-method"]) ?? null;
  const stateless = [versionHeader, meta].some((v) => typeof v === "string" && v >= STATELESS_REVISION);
  if (methodHeader === null && !stateless) return undefined;
  const out: HeaderMismatch[] = [];
  if (methodHeader !== raw.method) out.push({ header: "Mcp-Method", headerValue: methodHeader, bodyValue: raw.method });
  const nameField = NAMED.get(raw.method);
  if (nameField) {
    const nameHeader = decodeHeader(headers["mcp-name"]) ?? null;
    const bodyName = Object.hasOwn(params, nameField) && typeof params[nameField] === "string" ? (params[nameField] as string) : null;
    if (nameHeader !== bodyName) out.push({ header: "Mcp-Name", headerValue: nameHeader, bodyValue: bodyName });
  }
  if (versionHeader !== undefined && typeof meta === "string" && versionHeader !== meta) {
    out.push({ header: "MCP-Protocol-Version", headerValue: versionHeader, bodyValue: meta });
  }
  return out.length > 0 ? out : undefined;
}

/** Header values outside ASCII travel as `=?base64?<base64 of UTF-8>?=`. */
export function decodeHeader(value: string | string[] | undefined): string | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined) return undefined;
  const m = /^=\?base64\?([A-Za-z0-9+/=]*)\?=$/.exec(v.trim());
  return m ? Buffer.from(m[1]!, "base64").toString("utf8") : v.trim();
}

