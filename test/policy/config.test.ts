/**
 * Policy files: what loads, and how a bad file is reported (file, line, column and the path inside it),
 * through the loader and through `mcp-wiretap policy check`.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadPolicyFile, parsePolicy, PolicyConfigError } from "../../src/policy/load-config.js";
import { REPO_ROOT, runCli } from "../helpers/proxy-harness.js";
import { policyCheckCommand } from "../../src/cli/policy-commands.js";
import { captureStdout, tempDir, writePolicyFile } from "./policy-fixtures.js";

const SHIPPED = path.join(REPO_ROOT, "config", "policy.yaml");

/** The error a file gets, as one string (fails the test if it loads). */
function errorOf(text: string, file = "/etc/wiretap/p.yaml"): string {
  try {
    parsePolicy(text, file);
  } catch (err) {
    expect(err).toBeInstanceOf(PolicyConfigError);
    return (err as Error).message;
  }
  throw new Error(`expected ${JSON.stringify(text)} to be refused`);
}

describe("valid policy files", () => {
  it("an empty file is the defaults: monitor, default allow, every detector flagging, tools removed", () => {
    expect(parsePolicy("", "p.yaml")).toEqual({
      mode: "monitor",
      default: "allow",
      rules: [],
      detectors: { secrets: "flag", pii: "flag", hiddenText: "flag", poisoning: "flag", toolPinning: "flag", schema: "flag", apps: "flag" },
      rateLimits: [],
      removeDeniedTools: true,
    });
    // Comments only: still the defaults.
    expect(parsePolicy("# nothing here\n", "p.yaml").mode).toBe("monitor");
  });

  it("a full file loads with every field, and unspecified detectors keep their default", () => {
    const p = parsePolicy(
      `mode: enforce
default: deny
rules:
  - name: allow-everything-local
    action: allow
    match: { server: "127.0.0.1" }
  - name: no-etc
    action: deny
    reason: no system files
    match:
      server: "*.example.com:443"
      method: tools/call
      tool: "re:^(read|write)_file$"
      direction: client_to_server
      kind: request
      args: { path: "re:^/etc/", "options.mode": "w*" }
  - name: watch
    action: flag
detectors: { secrets: deny, pii: off }
rateLimits:
  - name: calls
    match: { method: tools/call }
    perMinute: 120
removeDeniedTools: false
`,
      "p.yaml",
    );
    expect(p.mode).toBe("enforce");
    expect(p.default).toBe("deny");
    expect(p.rules.map((r) => [r.name, r.action])).toEqual([
      ["allow-everything-local", "allow"],
      ["no-etc", "deny"],
      ["watch", "flag"],
    ]);
    expect(p.rules[1]!.match).toEqual({
      server: "*.example.com:443",
      method: "tools/call",
      tool: "re:^(read|write)_file$",
      direction: "client_to_server",
      kind: "request",
      args: { path: "re:^/etc/", "options.mode": "w*" },
    });
    expect(p.rules[2]!.match).toEqual({});
    expect(p.detectors).toEqual({ secrets: "deny", pii: "off", hiddenText: "flag", poisoning: "flag", toolPinning: "flag", schema: "flag", apps: "flag" });
    expect(p.rateLimits).toEqual([{ name: "calls", match: { method: "tools/call" }, perMinute: 120, action: "deny", per: "session" }]);
    expect(p.removeDeniedTools).toBe(false);
  });

  it("the shipped config/policy.yaml validates: monitor mode, default allow, no rules, every detector on", () => {
    const p = loadPolicyFile(SHIPPED);
    expect(p.mode).toBe("monitor");
    expect(p.default).toBe("allow");
    expect(p.rules).toEqual([]);
    for (const [name, setting] of Object.entries(p.detectors)) expect(setting, name).not.toBe("off");
    expect(Object.keys(p.detectors).sort()).toEqual(["apps", "hiddenText", "pii", "poisoning", "schema", "secrets", "toolPinning"]);
  });
});

describe("docs/policy.md", () => {
  it("every complete YAML example in it validates", () => {
    const text = readFileSync(path.join(REPO_ROOT, "docs", "policy.md"), "utf8");
    const blocks = [...text.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!);
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    for (const [i, block] of blocks.entries()) {
      // A fragment starting with a list key (e.g. only `rateLimits:`) is a complete file too.
      expect(() => parsePolicy(block, `docs/policy.md yaml block ${i + 1}`), block).not.toThrow();
    }
  });
});

describe("invalid policy files name the file, line, column and path", () => {
  it("unknown key inside a rule's match", () => {
    const msg = errorOf("mode: monitor\nrules:\n  - name: a\n    action: deny\n    match:\n      metod: tools/call\n");
    expect(msg).toMatch(/^\/etc\/wiretap\/p\.yaml:6:\d+: rules\[0\]\.match/);
    expect(msg).toContain('"metod"');
  });

  it("unknown key further down a mapping points at that key's line", () => {
    const msg = errorOf("rules:\n  - name: a\n    action: deny\n    colour: red\n");
    expect(msg).toMatch(/^\/etc\/wiretap\/p\.yaml:4:\d+: rules\[0\]/);
    expect(msg).toContain('"colour"');
  });

  it("unknown top-level key points at its line", () => {
    const msg = errorOf("mode: monitor\nfoo: 1\n");
    expect(msg).toMatch(/^\/etc\/wiretap\/p\.yaml:2:\d+: /);
    expect(msg).toContain('"foo"');
  });

  it("bad action", () => {
    const msg = errorOf("rules:\n  - name: a\n    action: block\n");
    expect(msg).toMatch(/^\/etc\/wiretap\/p\.yaml:3:13: rules\[0\]\.action: /);
    expect(msg).toMatch(/allow.*deny.*flag/);
  });

  it("bad detector setting", () => {
    expect(errorOf("detectors:\n  secrets: block\n")).toMatch(/^\/etc\/wiretap\/p\.yaml:2:12: detectors\.secrets: .*off.*flag.*deny/);
  });

  it("bad regular expression, in a field and in an argument pattern", () => {
    const field = errorOf('rules:\n  - name: a\n    action: deny\n    match:\n      tool: "re:("\n');
    expect(field).toMatch(/^\/etc\/wiretap\/p\.yaml:5:13: rules\[0\]\.match\.tool: invalid regular expression "\(": /);
    const arg = errorOf('rateLimits:\n  - name: r\n    perMinute: 5\n    match:\n      args:\n        file.path: "re:["\n');
    expect(arg).toMatch(/^\/etc\/wiretap\/p\.yaml:6:\d+: rateLimits\[0\]\.match\.args\.file\.path: invalid regular expression "\[": /);
  });

  it("duplicate rule names (also across rules and rate limits) point at the second one", () => {
    expect(errorOf("rules:\n  - name: a\n    action: deny\n  - name: a\n    action: allow\n")).toMatch(
      /^\/etc\/wiretap\/p\.yaml:4:11: rules\[1\]\.name: duplicate name "a"/,
    );
    expect(errorOf("rules:\n  - name: a\n    action: deny\nrateLimits:\n  - name: a\n    perMinute: 3\n")).toMatch(
      /^\/etc\/wiretap\/p\.yaml:5:11: rateLimits\[0\]\.name: duplicate name "a"/,
    );
  });

  it("YAML syntax errors and duplicate keys", () => {
    expect(errorOf("mode: monitor\nrules: [\n  - name: a\n")).toMatch(/^\/etc\/wiretap\/p\.yaml:\d+:\d+: not valid YAML: /);
    expect(errorOf("mode: monitor\nmode: enforce\n")).toMatch(/^\/etc\/wiretap\/p\.yaml:2:1: not valid YAML: .*unique/);
  });

  it("wrong types: every problem is listed, each with its own line", () => {
    const msg = errorOf('removeDeniedTools: "yes"\nrateLimits:\n  - name: r\n    perMinute: 1.5\n');
    const lines = msg.split("\n");
    expect(lines).toHaveLength(2);
    expect(lines).toContainEqual(expect.stringMatching(/^\/etc\/wiretap\/p\.yaml:4:16: rateLimits\[0\]\.perMinute: .*int/));
    expect(lines).toContainEqual(expect.stringMatching(/^\/etc\/wiretap\/p\.yaml:1:20: removeDeniedTools: .*boolean/));
    expect(errorOf("rules: {}\n")).toMatch(/^\/etc\/wiretap\/p\.yaml:1:8: rules: .*array/);
    expect(errorOf("rateLimits:\n  - name: r\n    perMinute: 0\n")).toMatch(/:3:16: rateLimits\[0\]\.perMinute: /);
    expect(errorOf("rules:\n  - action: deny\n")).toMatch(/:2:5: rules\[0\]\.name: /);
    expect(errorOf('rules:\n  - name: a\n    action: deny\n    match: { tool: "" }\n')).toMatch(/:4:\d+: rules\[0\]\.match\.tool: must not be empty/);
    expect(errorOf("rules:\n  - name: a\n    action: deny\n    match: { direction: inbound }\n")).toMatch(/:4:\d+: rules\[0\]\.match\.direction: /);
  });

  it("a missing file names the file", () => {
    expect(() => loadPolicyFile("/nonexistent/policy.yaml")).toThrow(/^\/nonexistent\/policy\.yaml: cannot read the policy file \(ENOENT\)/);
  });
});

describe.concurrent("mcp-wiretap policy check", () => {
  let tmp: ReturnType<typeof tempDir>;
  beforeAll(() => {
    tmp = tempDir();
  });
  afterAll(() => tmp.cleanup());

  it("exits 0 and summarises a valid file: mode, each rule's conditions, detectors, rate limits", async () => {
    const file = writePolicyFile(
      tmp.dir,
      `mode: enforce
rules:
  - name: no-env
    action: deny
    match: { method: tools/call, tool: get-env }
detectors: { secrets: deny }
rateLimits:
  - { name: calls, match: { method: tools/call }, perMinute: 120, per: server }
`,
    );
    const r = await runCli(["policy", "check", file]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`${file}: valid`);
    expect(r.stdout).toContain("mode: enforce, default: allow");
    expect(r.stdout).toContain('rule no-env (deny): method matches "tools/call" and tool matches "get-env"');
    expect(r.stdout).toContain("secrets=deny");
    expect(r.stdout).toContain("rate limit calls: 120/min per server → deny");
  });

  it("exits 2 with file:line:col and the path on stderr for a bad file", async () => {
    const file = writePolicyFile(tmp.dir, "mode: enforce\nrules:\n  - name: a\n    action: deny\n    match: { tool: \"re:(\" }\n", "bad.yaml");
    const r = await runCli(["policy", "check", file]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(new RegExp(`^mcp-wiretap: ${file.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}:5:\\d+: rules\\[0\\]\\.match\\.tool: invalid regular expression`));
  });

  it("the shipped config validates through the check command", () => {
    const out = captureStdout(() => policyCheckCommand(SHIPPED));
    expect(out).toContain(`${SHIPPED}: valid`);
    expect(out).toContain("mode: monitor, default: allow");
    expect(out).toContain("detectors: secrets=flag, pii=flag, hiddenText=flag, poisoning=flag, toolPinning=flag, schema=flag, apps=flag");
  });
});
