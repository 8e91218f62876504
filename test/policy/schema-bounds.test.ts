/**
 * Schema checks against a hostile server: its patterns run on RE2 (linear time), schemas the proxy
 * cannot check safely (RE2-unsupported syntax, too large, too deep) are skipped with a record note.
 */
import { describe, expect, it } from "vitest";
import { SchemaCompiler } from "../../src/policy/schema-compiler.js";
import { policyFrom, toolCall, toolsListResponse } from "./policy-fixtures.js";

const SCHEMA_ONLY = "detectors: { secrets: off, pii: off, hiddenText: off, poisoning: off, toolPinning: off, schema: flag }\n";
const SCHEMA_DENY = "mode: enforce\ndetectors: { secrets: off, pii: off, hiddenText: off, poisoning: off, toolPinning: off, schema: deny }\n";
const SERVER = "mcp.example.com:443";
const EVIL = "a".repeat(31) + "!";

const withPattern = (pattern: string) => ({ name: "match", inputSchema: { type: "object", properties: { s: { type: "string", pattern } } } });
const schemaRule = (d: { rules: { name: string; action: string; findings?: { type: string; path: string; detail?: string }[] }[] }) =>
  d.rules.find((r) => r.name === "detector:schema");

function timed<T>(run: () => T): { value: T; ms: number } {
  const t = performance.now();
  const value = run();
  return { value, ms: performance.now() - t };
}

describe("schema checks: server-supplied regular expressions", () => {
  it('pattern "^(a+)+$" against 31 a\'s and a "!": judged in well under a second, still a violation', () => {
    const policy = policyFrom(SCHEMA_ONLY);
    policy.judge(toolsListResponse([withPattern("^(a+)+$")], { server: SERVER }));
    // Backtracking engines take seconds to minutes here (12.8 s measured); RE2 takes microseconds.
    const { value: d, ms } = timed(() => policy.judge(toolCall("match", { s: EVIL }, { server: SERVER })));
    expect(ms).toBeLessThan(1_000);
    expect(schemaRule(d)?.findings).toEqual([{ type: "schema_violation", path: "/params/arguments/s", detail: 'must match pattern "^(a+)+$"' }]);
    expect(policy.judge(toolCall("match", { s: "aaaa" }, { server: SERVER })).rules).toEqual([]);
  });

  it("patternProperties and propertyNames run on RE2 too", () => {
    const policy = policyFrom(SCHEMA_ONLY);
    const tool = {
      name: "props",
      inputSchema: { type: "object", patternProperties: { "^(x+)+$": { type: "number" } }, propertyNames: { pattern: "^(x+|y)+$" } },
    };
    policy.judge(toolsListResponse([tool], { server: SERVER }));
    const { value: d, ms } = timed(() => policy.judge(toolCall("props", { ["x".repeat(40) + "!"]: 1 }, { server: SERVER })));
    expect(ms).toBeLessThan(1_000);
    expect(new Set(schemaRule(d)?.findings?.map((f) => f.type))).toEqual(new Set(["schema_violation"]));
    expect(policy.judge(toolCall("props", { xxx: 1, y: 2 }, { server: SERVER })).rules).toEqual([]);
    expect(schemaRule(policy.judge(toolCall("props", { xxx: "not a number" }, { server: SERVER })))?.findings?.[0]).toMatchObject({ path: "/params/arguments/xxx" });
  });

  it("ECMAScript \\u escapes are understood (RE2 spells them \\x{…})", () => {
    const policy = policyFrom(SCHEMA_ONLY);
    policy.judge(toolsListResponse([withPattern("^caf\\u00e9$")], { server: SERVER }));
    expect(policy.judge(toolCall("match", { s: "café" }, { server: SERVER })).rules).toEqual([]);
    expect(schemaRule(policy.judge(toolCall("match", { s: "cafe" }, { server: SERVER })))?.findings?.[0]?.type).toBe("schema_violation");
  });

  it.each([
    ["a lookahead", "^(?!admin).*$"],
    ["a backreference", "^(a)\\1$"],
  ])("%s (RE2 cannot run it): the tool is not checked, a flag-level schema_unchecked note says why, never a deny", (_label, pattern) => {
    for (const yaml of [SCHEMA_ONLY, SCHEMA_DENY]) {
      const policy = policyFrom(yaml);
      policy.judge(toolsListResponse([withPattern(pattern)], { server: SERVER }));
      const d = policy.judge(toolCall("match", { s: "admin" }, { server: SERVER }));
      expect(d).toMatchObject({ action: "flag", enforced: false });
      const rule = schemaRule(d)!;
      expect(rule.action).toBe("flag");
      expect(rule.findings).toHaveLength(1);
      expect(rule.findings![0]).toMatchObject({ type: "schema_unchecked", path: "/params/name" });
      expect(rule.findings![0]!.detail).toMatch(/^inputSchema of tool "match" not checked: pattern .* is not supported by the RE2 engine/);
    }
  });
});

describe("schema checks: bounded compilation", () => {
  it("a schema with 50,000 properties is not compiled (too large): fast, noted", () => {
    const properties = Object.fromEntries(Array.from({ length: 50_000 }, (_, i) => [`p${i}`, { type: "string" }]));
    const policy = policyFrom(SCHEMA_ONLY);
    policy.judge(toolsListResponse([{ name: "huge", inputSchema: { type: "object", properties } }], { server: SERVER }));
    const { value: d, ms } = timed(() => policy.judge(toolCall("huge", { p1: 1 }, { server: SERVER })));
    expect(ms).toBeLessThan(1_000);
    expect(schemaRule(d)?.findings?.[0]).toMatchObject({ type: "schema_unchecked", detail: expect.stringMatching(/too large/) });
  });

  it("a schema nested 1,000 deep is not compiled (too deep): fast, noted, no crash", () => {
    let deep: Record<string, unknown> = { type: "string" };
    for (let i = 0; i < 1_000; i++) deep = { type: "object", properties: { x: deep } };
    const policy = policyFrom(SCHEMA_ONLY);
    policy.judge(toolsListResponse([{ name: "deep", inputSchema: deep }], { server: SERVER }));
    const { value: d, ms } = timed(() => policy.judge(toolCall("deep", { x: 1 }, { server: SERVER })));
    expect(ms).toBeLessThan(1_000);
    expect(schemaRule(d)?.findings?.[0]).toMatchObject({ type: "schema_unchecked", detail: expect.stringMatching(/too deep/) });
  });

  it("the same schema announced by many tools and servers is compiled once (content-addressed cache)", () => {
    const policy = policyFrom(SCHEMA_ONLY);
    const properties = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`p${i}`, { type: "string", maxLength: 5 }]));
    const tools = Array.from({ length: 300 }, (_, i) => ({ name: `t${i}`, inputSchema: { type: "object", properties } }));
    policy.judge(toolsListResponse(tools, { server: SERVER }));
    policy.judge(toolCall("t0", { p1: "ok" }, { server: SERVER }));
    const all = tools.map((t) => policy.judge(toolCall(t.name, { p1: "far too long" }, { server: SERVER })));
    expect(all.every((d) => schemaRule(d)?.findings?.[0]?.type === "schema_violation")).toBe(true);
    // Compiled once: equal content (another object, other key order) gets the very same validator. (Not a
    // timing: 300 compilations take seconds and 300 hits milliseconds, but a busy machine blurs both.)
    const compiler = new SchemaCompiler();
    const validator = (schema: object): unknown => ("validate" in compiler.compile(schema) ? (compiler.compile(schema) as { validate: unknown }).validate : undefined);
    const first = validator({ type: "object", properties });
    expect(first).toBeTypeOf("function");
    expect(validator(JSON.parse(JSON.stringify({ properties, type: "object" })) as object)).toBe(first);
    expect(validator({ type: "object", properties: { p0: { type: "number" } } })).not.toBe(first);
  });

  it("two servers may use the same $id for different schemas: each is checked against its own", () => {
    const policy = policyFrom(SCHEMA_ONLY);
    const a = { name: "t", inputSchema: { $id: "https://schemas.example/same.json", type: "object", properties: { v: { type: "number" } } } };
    const b = { name: "t", inputSchema: { $id: "https://schemas.example/same.json", type: "object", properties: { v: { type: "string" } } } };
    policy.judge(toolsListResponse([a], { server: "a.example:443" }));
    policy.judge(toolsListResponse([b], { server: "b.example:443" }));
    expect(policy.judge(toolCall("t", { v: 1 }, { server: "a.example:443" })).rules).toEqual([]);
    expect(policy.judge(toolCall("t", { v: "x" }, { server: "b.example:443" })).rules).toEqual([]);
    expect(schemaRule(policy.judge(toolCall("t", { v: 1 }, { server: "b.example:443" })))?.findings?.[0]?.type).toBe("schema_violation");
    expect(schemaRule(policy.judge(toolCall("t", { v: "x" }, { server: "a.example:443" })))?.findings?.[0]?.type).toBe("schema_violation");
  });

  it("a recursive schema and arguments nested 20,000 deep: no crash, the record notes the call could not be checked", () => {
    const policy = policyFrom(SCHEMA_DENY);
    policy.judge(toolsListResponse([{ name: "tree", inputSchema: { type: "object", properties: { x: { $ref: "#" } } } }], { server: SERVER }));
    let args: Record<string, unknown> = {};
    for (let i = 0; i < 20_000; i++) args = { x: args };
    const event = toolCall("tree", {}, { server: SERVER });
    (event.raw as { params: { arguments: unknown } }).params.arguments = args;
    const d = policy.judge(event);
    expect(d).toMatchObject({ action: "flag", enforced: false });
    expect(schemaRule(d)?.findings?.[0]).toMatchObject({ type: "schema_unchecked", detail: expect.stringMatching(/arguments/) });
  });
});
