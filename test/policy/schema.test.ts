/**
 * Schema checks: tools/call arguments against the inputSchema the same server announced in tools/list.
 */
import { describe, expect, it } from "vitest";
import { policyFrom, toolCall, toolsListResponse } from "./policy-fixtures.js";

const SCHEMA_ONLY = "detectors: { secrets: off, pii: off, hiddenText: off, poisoning: off, toolPinning: off, schema: flag }\n";
const SERVER = "mcp.example.com:443";
const OTHER = "other.example.com:443";

const tools = [
  {
    name: "get-sum",
    description: "Returns the sum of two numbers",
    inputSchema: {
      type: "object",
      properties: { a: { type: "number" }, b: { type: "number" } },
      required: ["a", "b"],
      additionalProperties: false,
    },
  },
  {
    name: "echo",
    description: "Echoes back the input",
    inputSchema: { type: "object", properties: { message: { type: "string", maxLength: 10 }, opts: { type: "object", properties: { level: { enum: ["low", "high"] } } } } },
  },
  { name: "no-schema", description: "Has no usable schema", inputSchema: "not a schema" },
];

const schemaFindings = (d: { rules: { name: string; findings?: { type: string; path: string; detail?: string }[] }[] }) =>
  d.rules.find((r) => r.name === "detector:schema")?.findings ?? [];

function learned() {
  const policy = policyFrom(SCHEMA_ONLY);
  policy.judge(toolsListResponse(tools, { server: SERVER }));
  return policy;
}

describe("schema detector", () => {
  it("valid arguments: no finding", () => {
    const policy = learned();
    expect(policy.judge(toolCall("get-sum", { a: 1, b: 2 }, { server: SERVER })).rules).toEqual([]);
    expect(policy.judge(toolCall("echo", { message: "hi", opts: { level: "low" } }, { server: SERVER })).rules).toEqual([]);
  });

  it("arguments that violate the learned inputSchema: schema_violation with the JSON pointer of the bad value", () => {
    const policy = learned();
    const wrongType = policy.judge(toolCall("get-sum", { a: "1", b: 2 }, { server: SERVER }));
    expect(wrongType.action).toBe("flag");
    expect(wrongType.rules[0]).toMatchObject({ name: "detector:schema", action: "flag", reason: "schema: schema_violation (1 finding)" });
    expect(schemaFindings(wrongType)).toEqual([{ type: "schema_violation", path: "/params/arguments/a", detail: "must be number" }]);

    expect(schemaFindings(policy.judge(toolCall("echo", { opts: { level: "max" } }, { server: SERVER })))).toEqual([
      { type: "schema_violation", path: "/params/arguments/opts/level", detail: "must be equal to one of the allowed values" },
    ]);
    expect(schemaFindings(policy.judge(toolCall("echo", { message: "far too long for it" }, { server: SERVER })))).toEqual([
      { type: "schema_violation", path: "/params/arguments/message", detail: "must NOT have more than 10 characters" },
    ]);
    // Missing and extra properties are reported on the arguments object.
    expect(schemaFindings(policy.judge(toolCall("get-sum", { a: 1 }, { server: SERVER })))).toEqual([
      { type: "schema_violation", path: "/params/arguments", detail: "must have required property 'b'" },
    ]);
    expect(schemaFindings(policy.judge(toolCall("get-sum", { a: 1, b: 2, c: 3 }, { server: SERVER })))).toEqual([
      { type: "schema_violation", path: "/params/arguments", detail: "must NOT have additional properties" },
    ]);
    // No arguments at all are checked as {}.
    const none = policy.judge({ ...toolCall("get-sum", {}, { server: SERVER }), raw: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "get-sum" } } });
    expect(schemaFindings(none).map((f) => f.type)).toEqual(["schema_violation"]);
  });

  it("a tool the server did not list: unknown_tool at /params/name", () => {
    const policy = learned();
    expect(schemaFindings(policy.judge(toolCall("rm-rf", {}, { server: SERVER })))).toEqual([
      { type: "unknown_tool", path: "/params/name", detail: 'tool "rm-rf" is not in the server\'s tools/list' },
    ]);
  });

  it("nothing learned for the server (no tools/list seen, or another server's list): no finding", () => {
    const fresh = policyFrom(SCHEMA_ONLY);
    expect(fresh.judge(toolCall("anything", { a: "x" }, { server: SERVER })).rules).toEqual([]);
    const policy = learned();
    expect(policy.judge(toolCall("rm-rf", {}, { server: OTHER })).rules).toEqual([]);
    expect(policy.judge(toolCall("get-sum", { a: "x" }, { server: OTHER })).rules).toEqual([]);
  });

  it("a tool whose inputSchema cannot be used is not checked", () => {
    expect(learned().judge(toolCall("no-schema", { anything: 1 }, { server: SERVER })).rules).toEqual([]);
  });

  it("pages of a paginated tools/list accumulate; a later list replaces a tool's schema", () => {
    const policy = policyFrom(SCHEMA_ONLY);
    policy.judge(toolsListResponse([tools[0]!], { server: SERVER }));
    policy.judge(toolsListResponse([tools[1]!], { server: SERVER }));
    expect(policy.judge(toolCall("get-sum", { a: 1, b: 2 }, { server: SERVER })).rules).toEqual([]);
    expect(policy.judge(toolCall("echo", { message: "x" }, { server: SERVER })).rules).toEqual([]);
    policy.judge(toolsListResponse([{ name: "echo", inputSchema: { type: "object", properties: { message: { type: "number" } } } }], { server: SERVER }));
    expect(schemaFindings(policy.judge(toolCall("echo", { message: "x" }, { server: SERVER })))).toEqual([
      { type: "schema_violation", path: "/params/arguments/message", detail: "must be number" },
    ]);
  });

  it("schema: deny in enforce mode blocks the call", () => {
    const policy = policyFrom("mode: enforce\ndetectors: { secrets: off, pii: off, hiddenText: off, poisoning: off, toolPinning: off, schema: deny }\n");
    policy.judge(toolsListResponse(tools, { server: SERVER }));
    expect(policy.judge(toolCall("get-sum", { a: "1", b: 2 }, { server: SERVER }))).toMatchObject({ action: "deny", enforced: true });
    expect(policy.judge(toolCall("get-sum", { a: 1, b: 2 }, { server: SERVER }))).toMatchObject({ action: "allow", enforced: false });
  });
});
