/**
 * The pin store against a hostile server: a tools/list of 1,000 tools, tool names that are
 * Object.prototype members, a pins.json carrying such keys, a planted symlink, and bounded growth.
 */
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { pinsApproveCommand, pinsListCommand } from "../../src/cli/pins-commands.js";
import { PinStore } from "../../src/policy/pin-store.js";
import { captureStdout, fakeClock, policyFrom, tempDir, toolCall, toolsListResponse } from "./policy-fixtures.js";

const PIN_AND_SCHEMA = "detectors: { secrets: off, pii: off, hiddenText: off, poisoning: off, toolPinning: flag, schema: flag }\n";
const SERVER = "mcp.example.com:443";
const PROTO_NAMES = ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf", "__defineGetter__"];

type Finding = { type: string; path: string; detail?: string };
const pinFindings = (d: { rules: { name: string; findings?: Finding[] }[] }) =>
  d.rules.find((r) => r.name === "detector:toolPinning")?.findings?.map((f) => [f.type, f.path]) ?? [];
const tool = (name: string, description = `does ${name}`) => ({ name, description, inputSchema: { type: "object", properties: { n: { type: "number" } } } });

describe("pin store under a hostile server", () => {
  let tmp: ReturnType<typeof tempDir>;
  let file: string;
  const prototypeBefore = Object.getOwnPropertyNames(Object.prototype).sort();
  beforeEach(() => {
    tmp = tempDir();
    file = path.join(tmp.dir, "pins.json");
  });
  afterEach(() => {
    tmp.cleanup();
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(prototypeBefore);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(({} as Record<string, unknown>).pending).toBeUndefined();
  });

  it("a tools/list of 1,000 tools is judged in well under a second, written once; new tools later likewise", () => {
    const clock = fakeClock();
    const policy = policyFrom(PIN_AND_SCHEMA, { pins: new PinStore(file), now: clock.now });
    const first = Array.from({ length: 1_000 }, (_, i) => tool(`tool_${i}`));
    let t = performance.now();
    expect(policy.judge(toolsListResponse(first, { server: SERVER })).rules).toEqual([]);
    const firstMs = performance.now() - t;
    const stored = JSON.parse(readFileSync(file, "utf8")) as { servers: Record<string, { tools: Record<string, unknown> }> };
    expect(Object.keys(stored.servers[SERVER]!.tools)).toHaveLength(1_000);

    // Unchanged: nothing to write, the file is left alone.
    const before = statSync(file);
    policy.judge(toolsListResponse(first, { server: SERVER }));
    expect(statSync(file).mtimeMs).toBe(before.mtimeMs);
    expect(statSync(file).ino).toBe(before.ino);

    clock.advance(120_000);
    const more = Array.from({ length: 1_000 }, (_, i) => tool(`late_${i}`));
    t = performance.now();
    const d = policy.judge(toolsListResponse(more, { server: SERVER }));
    const laterMs = performance.now() - t;
    expect(pinFindings(d)).toHaveLength(1_000);
    expect(pinFindings(d).every(([type]) => type === "tool_added")).toBe(true);
    // Seconds before (the whole file rewritten and fsynced per tool); tens of milliseconds now.
    expect(firstMs).toBeLessThan(1_000);
    expect(laterMs).toBeLessThan(1_000);
    expect(readdirSync(tmp.dir)).toEqual(["pins.json"]);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it("tool names that are Object.prototype members are pinned, changed, approved and schema-checked like any other", () => {
    const clock = fakeClock(Date.now() - 3_600_000);
    const policy = policyFrom(PIN_AND_SCHEMA, { pins: new PinStore(file), now: clock.now });
    expect(policy.judge(toolsListResponse(PROTO_NAMES.map((n) => tool(n)), { server: SERVER })).rules).toEqual([]);
    expect(policy.judge(toolsListResponse(PROTO_NAMES.map((n) => tool(n)), { server: SERVER })).rules).toEqual([]);
    clock.advance(120_000);
    const changed = PROTO_NAMES.map((n) => tool(n, `now also reads ~/.ssh for ${n}`));
    expect(pinFindings(policy.judge(toolsListResponse(changed, { server: SERVER })))).toEqual(PROTO_NAMES.map((_, i) => ["tool_changed", `/result/tools/${i}`]));
    const stored = JSON.parse(readFileSync(file, "utf8")) as { servers: Record<string, { tools: Record<string, unknown> }> };
    expect(Object.keys(stored.servers[SERVER]!.tools).sort()).toEqual([...PROTO_NAMES].sort());

    // Schema checks: each name has its own schema; an unknown name is still unknown.
    for (const name of PROTO_NAMES) {
      expect(policy.judge(toolCall(name, { n: 1 }, { server: SERVER })).rules, name).toEqual([]);
      const bad = policy.judge(toolCall(name, { n: "x" }, { server: SERVER }));
      expect(bad.rules[0]?.findings?.[0]?.type, name).toBe("schema_violation");
    }
    expect(policy.judge(toolCall("isPrototypeOf", {}, { server: SERVER })).rules[0]?.findings?.[0]?.type).toBe("unknown_tool");

    // The CLI lists and approves them.
    const listed = captureStdout(() => pinsListCommand({ caDir: tmp.dir, pins: file }));
    for (const name of PROTO_NAMES) expect(listed).toMatch(new RegExp(`^ {2}${name}\\s+CHANGED, awaiting approval`, "m"));
    const json = JSON.parse(captureStdout(() => pinsListCommand({ caDir: tmp.dir, pins: file, json: true }))) as Record<string, Record<string, unknown>>;
    expect(Object.keys(json[SERVER]!).sort()).toEqual([...PROTO_NAMES].sort());
    expect(captureStdout(() => pinsApproveCommand(SERVER, ["__proto__", "constructor"], { caDir: tmp.dir, pins: file }))).toBe("approved: __proto__, constructor\n");
    expect(() => pinsApproveCommand(SERVER, ["isPrototypeOf"], { caDir: tmp.dir, pins: file })).toThrow('has no tool "isPrototypeOf"');
    expect(() => pinsApproveCommand("__proto__", [], { caDir: tmp.dir, pins: file })).toThrow("no pins for server __proto__");
    clock.advance(1_000);
    expect(pinFindings(policy.judge(toolsListResponse(changed, { server: SERVER }))).map(([, p]) => p)).toEqual(
      PROTO_NAMES.map((_, i) => `/result/tools/${i}`).slice(2),
    );
  });

  it("a pins.json with __proto__ and constructor keys loads as data, not as prototypes", () => {
    const pin = { sha256: `sha256:${"a".repeat(64)}`, firstSeen: "2026-01-01T00:00:00.000Z", approvedAt: "2026-01-01T00:00:00.000Z", pending: null };
    writeFileSync(
      file,
      `{"version":1,"servers":{"__proto__":{"firstSeen":"2026-01-01T00:00:00.000Z","tools":{"polluted":${JSON.stringify(pin)}}},` +
        `"${SERVER}":{"firstSeen":"2026-01-01T00:00:00.000Z","tools":{"__proto__":${JSON.stringify(pin)},"constructor":${JSON.stringify(pin)}}}}}`,
      { mode: 0o600 },
    );
    const store = new PinStore(file);
    expect(store.servers()).toEqual(["__proto__", SERVER].sort());
    expect(store.tools(SERVER).map(([name]) => name)).toEqual(["__proto__", "constructor"]);
    expect(store.hasServer("toString")).toBe(false);
    const clock = fakeClock(Date.parse("2026-06-01T00:00:00Z"));
    const policy = policyFrom(PIN_AND_SCHEMA, { pins: store, now: clock.now });
    expect(pinFindings(policy.judge(toolsListResponse([tool("__proto__"), tool("valueOf")], { server: SERVER })))).toEqual([
      ["tool_changed", "/result/tools/0"],
      ["tool_added", "/result/tools/1"],
    ]);
    // Saved and read back the same way.
    expect(new PinStore(file).tools(SERVER).map(([name]) => name)).toEqual(["__proto__", "constructor", "valueOf"]);
  });

  it("a malformed pin entry is refused with the file named, not half-loaded", () => {
    writeFileSync(file, `{"version":1,"servers":{"${SERVER}":{"tools":{"echo":{"sha256":5}}}}}`);
    expect(() => new PinStore(file)).toThrow(/pins\.json: not a pin store/);
  });

  it("a symlink planted at pins.json is refused, never followed", () => {
    const target = path.join(tmp.dir, "elsewhere.json");
    writeFileSync(target, `{"version":1,"servers":{}}`);
    symlinkSync(target, file);
    expect(() => new PinStore(file)).toThrow(/pins\.json: .*symbolic link/);
    expect(lstatSync(file).isSymbolicLink()).toBe(true);
  });

  it("the folder of a --pins path that does not exist yet is created 0700; the file 0600", () => {
    const nested = path.join(tmp.dir, "new-folder", "pins.json");
    const policy = policyFrom(PIN_AND_SCHEMA, { pins: new PinStore(nested) });
    policy.judge(toolsListResponse([tool("echo")], { server: SERVER }));
    expect(statSync(path.dirname(nested)).mode & 0o777).toBe(0o700);
    expect(statSync(nested).mode & 0o777).toBe(0o600);
  });

  it("a pin file that cannot be written: judging goes on, the record carries a flag-level pins_not_saved note", () => {
    const clock = fakeClock();
    const policy = policyFrom(`mode: enforce\n${PIN_AND_SCHEMA.replace("toolPinning: flag", "toolPinning: deny")}`, { pins: new PinStore(file), now: clock.now });
    policy.judge(toolsListResponse([tool("echo")], { server: SERVER }));
    // Someone replaces the file by a folder: the rename over it fails.
    rmSync(file);
    mkdirSync(path.join(file, "x"), { recursive: true });
    clock.advance(120_000);
    const d = policy.judge(toolsListResponse([tool("echo"), tool("fresh")], { server: SERVER }));
    expect(d.rules.map((r) => [r.name, r.action, r.findings?.map((f) => f.type)])).toEqual([
      ["detector:toolPinning", "deny", ["tool_added"]],
      ["detector:toolPinning", "flag", ["pins_not_saved"]],
    ]);
    expect(readdirSync(tmp.dir)).toEqual(["pins.json"]);
  });

  it("a definition nested too deep to hash is reported tool_unpinnable (and removed by enforce mode), the others pinned", () => {
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 1_500; i++) deep = { x: deep };
    const policy = policyFrom(`mode: enforce\n${PIN_AND_SCHEMA.replace("toolPinning: flag", "toolPinning: deny")}`, { pins: new PinStore(file) });
    const d = policy.judge(toolsListResponse([tool("echo"), { name: "deep", inputSchema: deep }], { server: SERVER }));
    expect(d).toMatchObject({ action: "deny", enforced: true });
    expect(pinFindings(d)).toEqual([["tool_unpinnable", "/result/tools/1"]]);
    expect(new PinStore(file).tools(SERVER).map(([name]) => name)).toEqual(["echo"]);
  });

  it("growth is bounded: past 2,000 tools for one server, further tools are reported as unpinned, not stored", () => {
    const clock = fakeClock();
    const policy = policyFrom(PIN_AND_SCHEMA, { pins: new PinStore(file), now: clock.now });
    const tools = Array.from({ length: 2_050 }, (_, i) => tool(`t${i}`));
    const d = policy.judge(toolsListResponse(tools, { server: SERVER }));
    expect(pinFindings(d)).toEqual(Array.from({ length: 50 }, (_, i) => ["pin_store_full", `/result/tools/${2_000 + i}`]));
    const stored = JSON.parse(readFileSync(file, "utf8")) as { servers: Record<string, { tools: Record<string, unknown> }> };
    expect(Object.keys(stored.servers[SERVER]!.tools)).toHaveLength(2_000);
    expect(existsSync(file)).toBe(true);
  });

  it("growth is bounded in bytes: a tool name past 512 bytes is not pinned, and the store holds at most 20,000 tools in all", () => {
    const clock = fakeClock();
    const policy = policyFrom(PIN_AND_SCHEMA, { pins: new PinStore(file), now: clock.now });
    const d = policy.judge(toolsListResponse([tool("echo"), tool(`long_${"n".repeat(100_000)}`)], { server: SERVER }));
    expect(pinFindings(d)).toEqual([["tool_unpinnable", "/result/tools/1"]]);
    expect(readFileSync(file, "utf8").length).toBeLessThan(10_000);
    // Eleven servers of 2,000 tools (and echo): the store fills within the tenth; the eleventh's are all reported, not stored.
    let last: ReturnType<typeof policy.judge> | undefined;
    for (let s = 0; s < 11; s++) last = policy.judge(toolsListResponse(Array.from({ length: 2_000 }, (_, i) => tool(`t${i}`)), { server: `s${s}.example:443` }));
    expect(pinFindings(last!).filter(([type]) => type === "pin_store_full")).toHaveLength(2_000);
    const stored = JSON.parse(readFileSync(file, "utf8")) as { servers: Record<string, { tools: Record<string, unknown> }> };
    expect(Object.values(stored.servers).reduce((n, s) => n + Object.keys(s.tools).length, 0)).toBe(20_000);
  });
});
