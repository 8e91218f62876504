import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  EMPTY_BATCH,
  JUDGEMENT_FAILED_CODE,
  POLICY_DENIED_CODE,
  PROTOCOL_VERSION_META_KEY,
  UNREADABLE_CODE,
  cancelledRequestId,
  classifyMessage,
  idKey,
  metaProtocolVersion,
  progressToken,
  progressTokenOfNotification,
  resultType,
  splitBatch,
  toolName,
} from "../../src/mcp/jsonrpc.js";

/**
 * An independent reading of the four MCP message kinds, declared as schemas (the spec's shapes): the
 * property test below checks that classifyMessage agrees with it on any value.
 */
const RequestId = z.union([z.string(), z.number().int()]);
const JsonObject = z.record(z.string(), z.unknown());
const lacks =
  (...names: string[]) =>
  (value: object): boolean =>
    names.every((name) => !Object.hasOwn(value, name) || (value as Record<string, unknown>)[name] === undefined);
const Request = z.looseObject({ jsonrpc: z.literal("2.0"), id: RequestId, method: z.string(), params: JsonObject.optional() }).refine(lacks("result", "error"));
const Notification = z.looseObject({ jsonrpc: z.literal("2.0"), method: z.string(), params: JsonObject.optional() }).refine(lacks("id", "result", "error"));
const Result = z.looseObject({ jsonrpc: z.literal("2.0"), id: RequestId, result: JsonObject }).refine(lacks("method", "error"));
/** `id` is null (or, as some SDKs send it, absent) when the request's id could not be read. */
const ErrorResponse = z
  .looseObject({ jsonrpc: z.literal("2.0"), id: RequestId.nullable().optional(), error: z.looseObject({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }) })
  .refine(lacks("method", "result"));
const is = (schema: z.ZodType, value: unknown): boolean => schema.safeParse(value).success;

describe("classifyMessage", () => {
  it("recognises the four MCP message kinds", () => {
    expect(classifyMessage({ jsonrpc: "2.0", id: 1, method: "tools/list" })).toEqual({
      kind: "request",
      id: 1,
      method: "tools/list",
      params: undefined,
    });
    expect(classifyMessage({ jsonrpc: "2.0", method: "notifications/initialized", params: {} })).toEqual({
      kind: "notification",
      method: "notifications/initialized",
      params: {},
    });
    expect(classifyMessage({ jsonrpc: "2.0", id: "a", result: { tools: [] } })).toEqual({
      kind: "response",
      id: "a",
      result: { tools: [] },
    });
    expect(classifyMessage({ jsonrpc: "2.0", id: 7, error: { code: -32601, message: "nope", data: 1 } })).toEqual({
      kind: "error",
      id: 7,
      error: { code: -32601, message: "nope", data: 1 },
    });
  });

  it("reads id null as a request whose id MCP does not allow", () => {
    const message = classifyMessage({ jsonrpc: "2.0", id: null, method: "ping" });
    expect(message).toMatchObject({ kind: "request", id: null, method: "ping" });
    expect(message.kind === "request" && message.idProblem).toBe("id must be a string or integer");
    expect(classifyMessage({ jsonrpc: "2.0", id: 1.5, method: "ping" })).toMatchObject({
      kind: "request",
      id: 1.5,
      idProblem: "id must be a string or integer",
    });
  });

  it("accepts error responses whose id is null or absent", () => {
    const error = { code: -32700, message: "Parse error" };
    expect(classifyMessage({ jsonrpc: "2.0", id: null, error })).toEqual({ kind: "error", id: null, error });
    expect(classifyMessage({ jsonrpc: "2.0", error })).toEqual({ kind: "error", id: null, error });
  });

  it.each([
    [42, "not an object (got a number)"],
    [null, "not an object (got null)"],
    [[], "not an object (got an array)"],
    [{ id: 1, method: "ping" }, 'missing jsonrpc "2.0"'],
    [{ jsonrpc: "1.0", id: 1, method: "ping" }, 'jsonrpc must be "2.0"'],
    [{ jsonrpc: "2.0", id: 1, method: 5 }, "method must be a string"],
    [{ jsonrpc: "2.0", id: 1, method: "x", result: {} }, "a message with a method cannot carry result or error"],
    [{ jsonrpc: "2.0", id: 1, method: "x", params: [1, 2] }, "params must be an object"],
    [{ jsonrpc: "2.0", id: true, method: "x" }, "id must be a string or integer"],
    [{ jsonrpc: "2.0", id: 1, result: {}, error: { code: 1, message: "" } }, "both result and error"],
    [{ jsonrpc: "2.0", id: 1 }, "no method, result or error"],
    [{ jsonrpc: "2.0", result: {} }, "a result response needs an id"],
    [{ jsonrpc: "2.0", id: null, result: {} }, "id must be a string or integer"],
    [{ jsonrpc: "2.0", id: 1, result: "ok" }, "result must be an object"],
    [{ jsonrpc: "2.0", id: 1, error: "boom" }, "error must be an object"],
    [{ jsonrpc: "2.0", id: 1, error: { code: 1.5, message: "m" } }, "error.code must be an integer"],
    [{ jsonrpc: "2.0", id: 1, error: { code: 1 } }, "error.message must be a string"],
    [{ jsonrpc: "2.0", id: {}, error: { code: 1, message: "m" } }, "id must be a string or integer"],
  ])("%j is invalid: %s", (value, reason) => {
    expect(classifyMessage(value)).toMatchObject({ kind: "invalid", reason });
  });

  it("keeps whatever id and method it could read from an invalid message", () => {
    expect(classifyMessage({ id: "abc", method: "tools/call" })).toEqual({
      kind: "invalid",
      reason: 'missing jsonrpc "2.0"',
      id: "abc",
      method: "tools/call",
    });
    expect(classifyMessage({ jsonrpc: "2.0", id: 3, result: 1 })).toMatchObject({ id: 3 });
    expect(classifyMessage({ jsonrpc: "2.0", id: true, method: "x" })).not.toHaveProperty("id");
  });

  it("tolerates extra top-level members", () => {
    expect(classifyMessage({ jsonrpc: "2.0", id: 1, method: "ping", extra: true }).kind).toBe("request");
  });

  it("never throws and agrees with the schemas of the spec's four kinds", () => {
    const odd = fc.constantFrom<unknown>(null, true, 1.5, "", [], {}, [1], "2.0");
    const often = <T>(usual: fc.Arbitrary<T>, weight = 4) =>
      fc.oneof({ arbitrary: fc.constant(undefined), weight: 4 }, { arbitrary: usual, weight }, { arbitrary: odd, weight: 1 });
    const jsonObject = fc.dictionary(fc.string(), fc.jsonValue(), { maxKeys: 3 });
    const candidate = fc.record(
      {
        jsonrpc: fc.oneof({ arbitrary: fc.constant("2.0"), weight: 9 }, { arbitrary: odd, weight: 1 }),
        id: often(fc.oneof(fc.string(), fc.integer(), fc.constant(null))),
        method: often(fc.constantFrom("ping", "tools/call", "notifications/progress")),
        params: often(jsonObject),
        result: often(jsonObject, 2),
        error: often(fc.record({ code: fc.integer(), message: fc.string() }, { requiredKeys: ["code"] }), 2),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.oneof({ arbitrary: candidate, weight: 4 }, fc.jsonValue()), (value) => {
        const message = classifyMessage(value);
        const valid = !(message.kind === "request" && message.idProblem !== undefined);
        expect(is(Request, value)).toBe(message.kind === "request" && valid);
        expect(is(Notification, value)).toBe(message.kind === "notification");
        expect(is(Result, value)).toBe(message.kind === "response");
        expect(is(ErrorResponse, value)).toBe(message.kind === "error");
      }),
      { numRuns: 2000 },
    );
  });
});

describe("splitBatch", () => {
  it("treats arrays as batches and anything else as one message", () => {
    const one = { jsonrpc: "2.0", method: "ping", id: 1 };
    expect(splitBatch(one)).toEqual({ batch: false, messages: [one] });
    expect(splitBatch([one, one])).toEqual({ batch: true, messages: [one, one] });
  });

  it("turns an empty batch into a single invalid entry", () => {
    const { batch, messages } = splitBatch([]);
    expect(batch).toBe(true);
    expect(messages).toEqual([EMPTY_BATCH]);
    expect(classifyMessage(messages[0])).toEqual({ kind: "invalid", reason: "empty batch" });
  });
});

describe("idKey", () => {
  it("never confuses numeric and string ids", () => {
    expect(idKey(1)).toBe("n:1");
    expect(idKey("1")).toBe("s:1");
    expect(idKey("n:1")).not.toBe(idKey(1));
    expect(idKey("01")).not.toBe(idKey("1"));
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.integer()), fc.oneof(fc.string(), fc.integer()), (a, b) => {
        expect(idKey(a) === idKey(b)).toBe(a === b);
      }),
    );
  });
});

describe("field helpers", () => {
  const request = (method: string, params: unknown) => classifyMessage({ jsonrpc: "2.0", id: 1, method, params });
  const notification = (method: string, params: unknown) => classifyMessage({ jsonrpc: "2.0", method, params });

  it("reads the tool name of tools/call only", () => {
    expect(toolName(request("tools/call", { name: "echo", arguments: {} }))).toBe("echo");
    expect(toolName(request("tools/call", { name: 3 }))).toBeUndefined();
    expect(toolName(request("prompts/get", { name: "echo" }))).toBeUndefined();
    expect(toolName(notification("tools/call", { name: "echo" }))).toBeUndefined();
  });

  it("reads progress tokens from request _meta and from progress notifications", () => {
    expect(progressToken(request("tools/call", { _meta: { progressToken: "p1" } }))).toBe("p1");
    expect(progressToken(request("tools/call", { _meta: { progressToken: 9 } }))).toBe(9);
    expect(progressToken(request("tools/call", { _meta: { progressToken: {} } }))).toBeUndefined();
    expect(progressToken(request("tools/call", { _meta: "x" }))).toBeUndefined();
    expect(progressTokenOfNotification(notification("notifications/progress", { progressToken: 9, progress: 1 }))).toBe(9);
    expect(progressTokenOfNotification(notification("notifications/message", { progressToken: 9 }))).toBeUndefined();
  });

  it("reads the cancelled request id", () => {
    expect(cancelledRequestId(notification("notifications/cancelled", { requestId: "r1" }))).toBe("r1");
    expect(cancelledRequestId(notification("notifications/cancelled", { requestId: 4 }))).toBe(4);
    expect(cancelledRequestId(notification("notifications/cancelled", {}))).toBeUndefined();
  });

  it("reads the stateless protocol version and result type", () => {
    const meta = { [PROTOCOL_VERSION_META_KEY]: "2026-07-28" };
    expect(metaProtocolVersion(request("tools/list", { _meta: meta }))).toBe("2026-07-28");
    expect(metaProtocolVersion(request("tools/list", {}))).toBeUndefined();
    const inputRequired = classifyMessage({ jsonrpc: "2.0", id: 1, result: { resultType: "input_required" } });
    expect(resultType(inputRequired)).toBe("input_required");
    expect(resultType(classifyMessage({ jsonrpc: "2.0", id: 1, result: {} }))).toBeUndefined();
  });
});

describe("error codes", () => {
  it("the proxy's own codes lie in the server range and collide with none the spec or the SDKs use", () => {
    // JSON-RPC's implementation-defined server errors: -32099..-32000.
    for (const code of [POLICY_DENIED_CODE, UNREADABLE_CODE, JUDGEMENT_FAILED_CODE]) {
      expect(code).toBeGreaterThanOrEqual(-32099);
      expect(code).toBeLessThanOrEqual(-32000);
    }
    // SDK-internal -32000/-32001, resource not found, the 2026-07-28 header codes, URL elicitation required.
    const taken = [-32000, -32001, -32002, -32020, -32021, -32022, -32042];
    expect(taken.filter((code) => [POLICY_DENIED_CODE, UNREADABLE_CODE, JUDGEMENT_FAILED_CODE].includes(code))).toEqual([]);
  });
});
