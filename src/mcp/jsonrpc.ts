/**
 * JSON-RPC 2.0 as MCP uses it: `classifyMessage` says what any decoded JSON value is, and why it is not
 * valid when it is not (the one reading of a message in production).
 * Unknown top-level members are tolerated: JSON-RPC does not forbid them and a tap should not hide
 * a message because a peer added a field.
 */

import { isPlainObject } from "../util/plain-object.js";

export const JSONRPC_VERSION = "2.0";

/** `_meta` key that carries the protocol revision on every request in the stateless (2026-07-28) revision. */
export const PROTOCOL_VERSION_META_KEY = "io.modelcontextprotocol/protocolVersion";

/**
 * Code of the JSON-RPC error the proxy sends when its policy denies a request. It lies in the
 * implementation-defined server range (-32000..-32099) and is used by no MCP revision nor by the
 * SDKs (which use -32000 and -32001 internally), so a client log can tell a proxy denial from a
 * server's own error.
 */
export const POLICY_DENIED_CODE = -32051;
export const POLICY_DENIED_MESSAGE = "blocked by mcp-wiretap policy";
/** Code of the error the proxy sends, in enforce mode, for a message its receiver could read otherwise than the proxy. */
export const UNREADABLE_CODE = -32052;
export const UNREADABLE_MESSAGE = "mcp-wiretap: message cannot be read unambiguously";
/** Code of the error the proxy sends, in enforce mode, for a message whose judgement failed (fail closed). */
export const JUDGEMENT_FAILED_CODE = -32053;
export const JUDGEMENT_FAILED_MESSAGE = "mcp-wiretap could not judge this message";
/** Code of the error the sender of an intercepted message gets when it was dropped (by a person, a timeout or a full queue). */
export const INTERCEPT_DROPPED_CODE = -32054;

/** MCP request ids are strings or integers (JSON-RPC would also allow null and fractions). */
export type RequestId = string | number;
/** A string or a safe integer. */
export const isRequestId = (value: unknown): value is RequestId =>
  typeof value === "string" || (typeof value === "number" && Number.isSafeInteger(value));

/** MCP params and results are JSON objects, never by-position arrays. */
export type JsonObject = Record<string, unknown>;

export interface JSONRPCErrorObject {
  code: number;
  message: string;
  data?: unknown;
  [member: string]: unknown;
}

function hasMember(value: object, name: string): boolean {
  return Object.hasOwn(value, name) && (value as Record<string, unknown>)[name] !== undefined;
}

export interface ClassifiedRequest {
  kind: "request";
  /** null only for `"id": null`, which JSON-RPC reads as a request but MCP forbids (see `idProblem`). */
  id: RequestId | null;
  method: string;
  params: JsonObject | undefined;
  /** Set when the id is legal JSON-RPC but not a valid MCP id (null or a fraction). */
  idProblem?: string;
}
export interface ClassifiedNotification {
  kind: "notification";
  method: string;
  params: JsonObject | undefined;
}
export interface ClassifiedResponse {
  kind: "response";
  id: RequestId;
  result: JsonObject;
}
export interface ClassifiedError {
  kind: "error";
  id: RequestId | null;
  error: JSONRPCErrorObject;
}
export interface ClassifiedInvalid {
  kind: "invalid";
  reason: string;
  /** Whatever id and method could be read, so the log can still correlate the message. */
  id?: RequestId | null;
  method?: string;
}
export type ClassifiedMessage =
  | ClassifiedRequest
  | ClassifiedNotification
  | ClassifiedResponse
  | ClassifiedError
  | ClassifiedInvalid;

const ID_PROBLEM = "id must be a string or integer";

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return `a ${typeof value}`;
}

/** What `splitBatch` returns for `[]`, which JSON-RPC treats as one invalid request. */
export const EMPTY_BATCH: unknown = Object.freeze({});

/** Says what a decoded JSON value is as a JSON-RPC message; never throws. */
export function classifyMessage(value: unknown): ClassifiedMessage {
  if (value === EMPTY_BATCH) return { kind: "invalid", reason: "empty batch" };
  if (!isPlainObject(value)) return { kind: "invalid", reason: `not an object (got ${describe(value)})` };

  const has = (name: string) => hasMember(value, name);
  const rawId = value.id;
  const readableId =
    typeof rawId === "string" || typeof rawId === "number" || rawId === null ? rawId : undefined;
  const readableMethod = typeof value.method === "string" ? value.method : undefined;
  const invalid = (reason: string): ClassifiedInvalid => {
    const result: ClassifiedInvalid = { kind: "invalid", reason };
    if (has("id") && readableId !== undefined) result.id = readableId;
    if (readableMethod !== undefined) result.method = readableMethod;
    return result;
  };

  if (!has("jsonrpc")) return invalid('missing jsonrpc "2.0"');
  if (value.jsonrpc !== JSONRPC_VERSION) return invalid('jsonrpc must be "2.0"');

  if (has("method")) {
    if (readableMethod === undefined) return invalid("method must be a string");
    if (has("result") || has("error")) return invalid("a message with a method cannot carry result or error");
    const params = value.params;
    if (params !== undefined && !isPlainObject(params)) return invalid("params must be an object");
    if (!has("id")) return { kind: "notification", method: readableMethod, params };
    if (isRequestId(rawId)) return { kind: "request", id: rawId, method: readableMethod, params };
    // JSON-RPC still reads null and fractional ids as a request; MCP does not allow them.
    if (readableId === undefined) return invalid(ID_PROBLEM);
    return { kind: "request", id: readableId, method: readableMethod, params, idProblem: ID_PROBLEM };
  }

  const hasResult = has("result");
  const hasError = has("error");
  if (hasResult && hasError) return invalid("both result and error");
  if (!hasResult && !hasError) return invalid("no method, result or error");

  if (hasResult) {
    if (!isRequestId(rawId)) return invalid(has("id") ? ID_PROBLEM : "a result response needs an id");
    if (!isPlainObject(value.result)) return invalid("result must be an object");
    return { kind: "response", id: rawId, result: value.result };
  }

  if (has("id") && rawId !== null && !isRequestId(rawId)) return invalid(ID_PROBLEM);
  const error = value.error;
  if (!isPlainObject(error)) return invalid("error must be an object");
  if (typeof error.code !== "number" || !Number.isSafeInteger(error.code)) {
    return invalid("error.code must be an integer");
  }
  if (typeof error.message !== "string") return invalid("error.message must be a string");
  return { kind: "error", id: isRequestId(rawId) ? rawId : null, error: error as JSONRPCErrorObject };
}

/**
 * A JSON array is a batch of messages; anything else is a single message. An empty batch becomes
 * the single entry `EMPTY_BATCH`, which `classifyMessage` reports as invalid.
 */
export function splitBatch(value: unknown): { batch: boolean; messages: unknown[] } {
  if (!Array.isArray(value)) return { batch: false, messages: [value] };
  if (value.length === 0) return { batch: true, messages: [EMPTY_BATCH] };
  return { batch: true, messages: value };
}

/** Correlation key for a request id: `1` and `"1"` are different requests and must not collide. */
export function idKey(id: RequestId): string {
  return typeof id === "number" ? `n:${String(id)}` : `s:${id}`;
}

export type ProgressToken = string | number;

function isProgressToken(value: unknown): value is ProgressToken {
  return typeof value === "string" || (typeof value === "number" && Number.isFinite(value));
}

function metaOf(message: ClassifiedMessage): Record<string, unknown> | undefined {
  if (message.kind !== "request" && message.kind !== "notification") return undefined;
  const meta = message.params?._meta;
  return isPlainObject(meta) ? meta : undefined;
}

/** Tool name of a `tools/call` request. */
export function toolName(message: ClassifiedMessage): string | undefined {
  if (message.kind !== "request" || message.method !== "tools/call") return undefined;
  const name = message.params?.name;
  return typeof name === "string" ? name : undefined;
}

/** `params._meta.progressToken` of a request: later `notifications/progress` carry it. */
export function progressToken(message: ClassifiedMessage): ProgressToken | undefined {
  if (message.kind !== "request") return undefined;
  const token = metaOf(message)?.progressToken;
  return isProgressToken(token) ? token : undefined;
}

/** The token a `notifications/progress` reports on. */
export function progressTokenOfNotification(message: ClassifiedMessage): ProgressToken | undefined {
  if (message.kind !== "notification" || message.method !== "notifications/progress") return undefined;
  const token = message.params?.progressToken;
  return isProgressToken(token) ? token : undefined;
}

/** The request a `notifications/cancelled` cancels. */
export function cancelledRequestId(message: ClassifiedMessage): RequestId | undefined {
  if (message.kind !== "notification" || message.method !== "notifications/cancelled") return undefined;
  const id = message.params?.requestId;
  return isRequestId(id) ? id : undefined;
}

/** Protocol revision a stateless (2026-07-28) message names in its `_meta`. */
export function metaProtocolVersion(message: ClassifiedMessage): string | undefined {
  const version = metaOf(message)?.[PROTOCOL_VERSION_META_KEY];
  return typeof version === "string" ? version : undefined;
}

/** `result.resultType` of a response, e.g. "input_required" in the stateless revision. */
export function resultType(message: ClassifiedMessage): string | undefined {
  if (message.kind !== "response") return undefined;
  const type = message.result.resultType;
  return typeof type === "string" ? type : undefined;
}
