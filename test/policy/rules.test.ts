/**
 * Rules: every match field, how rules combine (deny beats allow, flags accumulate, default deny), what
 * each matcher says about itself, and `mcp-wiretap policy explain`.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ExplainInputError, policyExplainCommand } from "../../src/cli/policy-commands.js";
import { buildMatchers, explainAll } from "../../src/policy/matchers.js";
import { runCli } from "../helpers/proxy-harness.js";
import { captureStdout, firing, notification, policyFrom, request, response, rpcEvent, tempDir, toolCall, writePolicyFile } from "./policy-fixtures.js";

/** Detectors off, so only rules speak. */
const QUIET = "detectors: { secrets: off, pii: off, hiddenText: off, poisoning: off, toolPinning: off, schema: off }\n";

function oneRule(match: string, extra = ""): ReturnType<typeof policyFrom> {
  return policyFrom(`${QUIET}${extra}rules:\n  - name: r\n    action: deny\n    reason: test rule\n    match: ${match}\n`);
}

/** Whether the one-rule policy's rule fires on the event. */
function fires(policy: ReturnType<typeof policyFrom>, e: ReturnType<typeof request>): boolean {
  return firing(policy.judge(e)).includes("r");
}

/** Built at run time: no complete credential in the source. */
export const AWS_KEY_ID = ["AKIA", "Q7ZT3M5K2W9R4X6B"].join("");

describe("match fields", () => {
  it("server without a port: a case-insensitive glob on the host alone, any port", () => {
    const p = oneRule('{ server: "*.example.com" }');
    expect(fires(p, request("ping", undefined, { server: "mcp.example.com:443" }))).toBe(true);
    expect(fires(p, request("ping", undefined, { server: "a.b.EXAMPLE.com:8443" }))).toBe(true);
    expect(fires(p, request("ping", undefined, { server: "example.com:443" }))).toBe(false);
    expect(fires(p, request("ping", undefined, { server: "mcp.example.com.evil.net:443" }))).toBe(false);
    const exact = oneRule('{ server: "127.0.0.1" }');
    expect(fires(exact, request("ping", undefined, { server: "127.0.0.1:3000" }))).toBe(true);
    expect(fires(exact, request("ping", undefined, { server: "127.0.0.10:3000" }))).toBe(false);
  });

  it("server with a port (or :*): matched against host:port", () => {
    const p = oneRule('{ server: "mcp.example.com:8443" }');
    expect(fires(p, request("ping", undefined, { server: "mcp.example.com:8443" }))).toBe(true);
    expect(fires(p, request("ping", undefined, { server: "mcp.example.com:443" }))).toBe(false);
    const anyPort = oneRule('{ server: "mcp.example.com:*" }');
    expect(fires(anyPort, request("ping", undefined, { server: "mcp.example.com:1" }))).toBe(true);
    const v6 = oneRule('{ server: "[::1]:*" }');
    expect(fires(v6, request("ping", undefined, { server: "[::1]:8443" }))).toBe(true);
  });

  it("server: a bare IPv6 literal is a host, not host:port", () => {
    const p = oneRule('{ server: "::1" }');
    expect(fires(p, request("ping", undefined, { server: "[::1]:8443" }))).toBe(true);
    expect(fires(p, request("ping", undefined, { server: "127.0.0.1:8443" }))).toBe(false);
    expect(p.judgeConnect("::1", 443)).toMatchObject({ rule: "r" });
  });

  it("server: an IPv6 literal in a rule is read as the proxy reads a target (mapped to IPv4, one canonical form)", () => {
    const mapped = oneRule('{ server: "[::ffff:127.0.0.1]:8443" }');
    expect(fires(mapped, request("ping", undefined, { server: "127.0.0.1:8443" }))).toBe(true);
    expect(mapped.judgeConnect("127.0.0.1", 8443)).toMatchObject({ rule: "r" });
    const longhand = oneRule('{ server: "0:0:0:0:0:0:0:1" }');
    expect(fires(longhand, request("ping", undefined, { server: "[::1]:8443" }))).toBe(true);
    const bracketed = oneRule('{ server: "[0::1]" }');
    expect(fires(bracketed, request("ping", undefined, { server: "[::1]:8443" }))).toBe(true);
  });

  it("server as a regular expression (re:) is unanchored unless anchored", () => {
    const p = oneRule('{ server: "re:^(10|192\\\\.168)\\\\." }');
    expect(fires(p, request("ping", undefined, { server: "10.1.2.3:80" }))).toBe(true);
    expect(fires(p, request("ping", undefined, { server: "192.168.0.9:80" }))).toBe(true);
    expect(fires(p, request("ping", undefined, { server: "110.1.2.3:80" }))).toBe(false);
  });

  it("method: glob (* spans /), exact, and re:", () => {
    const glob = oneRule('{ method: "tools/*" }');
    expect(fires(glob, request("tools/call", { name: "x" }))).toBe(true);
    expect(fires(glob, request("tools/list"))).toBe(true);
    expect(fires(glob, request("prompts/list"))).toBe(false);
    const star = oneRule('{ method: "*" }');
    expect(fires(star, notification("notifications/initialized"))).toBe(true);
    const q = oneRule('{ method: "resources/?ist" }');
    expect(fires(q, request("resources/list"))).toBe(true);
    const re = oneRule('{ method: "re:^(tools|prompts)/list$" }');
    expect(fires(re, request("prompts/list"))).toBe(true);
    expect(fires(re, request("resources/list"))).toBe(false);
    // A message without a method (a response whose request is unknown) never matches a method pattern.
    expect(fires(star, rpcEvent({ jsonrpc: "2.0", id: 99, result: {} }))).toBe(false);
  });

  it("tool: the tools/call name, on the request and on its response", () => {
    const p = oneRule('{ tool: "get-*" }');
    expect(fires(p, toolCall("get-env"))).toBe(true);
    expect(fires(p, toolCall("echo"))).toBe(false);
    expect(fires(p, response("tools/call", { content: [] }, { tool: "get-env" }))).toBe(true);
    // No tool on other methods.
    expect(fires(p, request("tools/list"))).toBe(false);
  });

  it("direction and kind", () => {
    const dir = oneRule("{ direction: server_to_client }");
    expect(fires(dir, response("tools/list", { tools: [] }))).toBe(true);
    expect(fires(dir, request("ping"))).toBe(false);
    expect(fires(dir, request("sampling/createMessage", {}, { direction: "server_to_client" }))).toBe(true);
    const kind = oneRule("{ kind: notification }");
    expect(fires(kind, notification("notifications/initialized"))).toBe(true);
    expect(fires(kind, request("ping"))).toBe(false);
    const err = oneRule("{ kind: error, method: tools/call }");
    expect(fires(err, rpcEvent({ jsonrpc: "2.0", id: 5, error: { code: -32602, message: "bad" } }, { method: "tools/call" }))).toBe(true);
    expect(fires(err, response("tools/call", { content: [] }))).toBe(false);
  });

  it("args: dotted paths into tools/call arguments, globs and re:, numbers and booleans as text", () => {
    const p = oneRule('{ tool: read_file, args: { path: "re:^/etc/", "options.encoding": "utf*" } }');
    expect(fires(p, toolCall("read_file", { path: "/etc/passwd", options: { encoding: "utf8" } }))).toBe(true);
    expect(fires(p, toolCall("read_file", { path: "/etc/passwd", options: { encoding: "base64" } }))).toBe(false);
    expect(fires(p, toolCall("read_file", { path: "/home/u/etc/x", options: { encoding: "utf8" } }))).toBe(false);
    // A missing argument never matches, not even "*".
    expect(fires(oneRule('{ args: { path: "*" } }'), toolCall("read_file", {}))).toBe(false);
    expect(fires(oneRule('{ args: { path: "*" } }'), toolCall("read_file", { path: "" }))).toBe(true);
    const num = oneRule('{ args: { count: "re:^[0-9]{4,}$", dry: "false", "items.0": "rm*" } }');
    expect(fires(num, toolCall("t", { count: 10000, dry: false, items: ["rm -rf /", "x"] }))).toBe(true);
    expect(fires(num, toolCall("t", { count: 99, dry: false, items: ["rm -rf /"] }))).toBe(false);
    // An object is matched as its JSON text.
    expect(fires(oneRule('{ args: { opts: "*\\"force\\":true*" } }'), toolCall("t", { opts: { force: true } }))).toBe(true);
    // args only look at requests' params.arguments: the response is not matched.
    expect(fires(oneRule('{ args: { path: "*" } }'), response("tools/call", { path: "x" }))).toBe(false);
  });

  it("all conditions of a rule must hold; an empty match is every message", () => {
    const p = oneRule('{ server: "mcp.example.com", method: tools/call, tool: get-env, direction: client_to_server, kind: request }');
    expect(fires(p, toolCall("get-env"))).toBe(true);
    expect(fires(p, toolCall("get-env", {}, { server: "other.example.com:443" }))).toBe(false);
    expect(fires(p, toolCall("get-env", {}, { direction: "server_to_client" }))).toBe(false);
    const all = policyFrom(`${QUIET}rules:\n  - name: r\n    action: flag\n`);
    expect(firing(all.judge(notification("notifications/initialized")))).toEqual(["r"]);
    expect(firing(all.judge(response("initialize", {})))).toEqual(["r"]);
  });
});

describe("how rules combine", () => {
  const p = policyFrom(`${QUIET}rules:
  - { name: allow-tools, action: allow, match: { method: "tools/*" } }
  - { name: no-env, action: deny, reason: leaks the environment, match: { tool: get-env } }
  - { name: watch-calls, action: flag, reason: audit, match: { method: tools/call } }
  - { name: watch-env, action: flag, match: { tool: "*env*" } }
`);

  it("deny beats allow, and every matching rule is listed in order, with its reason", () => {
    const d = p.judge(toolCall("get-env"));
    expect(d.action).toBe("deny");
    expect(d.rules).toEqual([
      { name: "allow-tools", action: "allow" },
      { name: "no-env", action: "deny", reason: "leaks the environment" },
      { name: "watch-calls", action: "flag", reason: "audit" },
      { name: "watch-env", action: "flag" },
    ]);
  });

  it("flags accumulate, and a flag outranks allow", () => {
    const d = p.judge(toolCall("echo"));
    expect(d.action).toBe("flag");
    expect(firing(d)).toEqual(["allow-tools", "watch-calls"]);
    expect(p.judge(request("tools/list")).action).toBe("allow");
  });

  it("monitor mode never enforces; enforce mode enforces denials only", () => {
    expect(p.judge(toolCall("get-env")).enforced).toBe(false);
    const e = policyFrom(`mode: enforce\n${QUIET}rules:\n  - { name: no-env, action: deny, match: { tool: get-env } }\n  - { name: f, action: flag }\n`);
    expect(e.judge(toolCall("get-env"))).toMatchObject({ action: "deny", enforced: true });
    expect(e.judge(toolCall("echo"))).toMatchObject({ action: "flag", enforced: false });
  });

  it("no rule at all: allow", () => {
    expect(policyFrom(QUIET).judge(toolCall("anything"))).toEqual({ action: "allow", enforced: false, rules: [] });
  });
});

describe("default: deny", () => {
  it("without an allow rule: every message in both directions is denied by `default`", () => {
    const p = policyFrom(`mode: enforce\ndefault: deny\n${QUIET}`);
    for (const e of [request("initialize", {}), notification("notifications/initialized"), response("initialize", {}), request("roots/list", {}, { direction: "server_to_client" })]) {
      const d = p.judge(e);
      expect(d).toMatchObject({ action: "deny", enforced: true });
      expect(d.rules).toEqual([{ name: "default", action: "deny", reason: "no rule allows this message (default: deny)" }]);
    }
  });

  it("with allow rules: what they allow passes (responses included, via their request's method); the rest is denied", () => {
    const p = policyFrom(`default: deny\n${QUIET}rules:
  - { name: handshake, action: allow, match: { method: "re:^(initialize|notifications/initialized)$" } }
  - { name: echo-only, action: allow, match: { tool: echo } }
  - { name: watch, action: flag, match: { method: tools/list } }
`);
    expect(p.judge(request("initialize", {})).action).toBe("allow");
    expect(p.judge(response("initialize", {})).action).toBe("allow");
    expect(p.judge(toolCall("echo", { message: "hi" })).action).toBe("allow");
    expect(p.judge(response("tools/call", { content: [] }, { tool: "echo" })).action).toBe("allow");
    const other = p.judge(toolCall("get-env"));
    expect(other.action).toBe("deny");
    expect(firing(other)).toEqual(["default"]);
    // A flag is not an allow: still denied by default, the flag kept in the list.
    expect(firing(p.judge(request("tools/list")))).toEqual(["watch", "default"]);
    expect(p.judge(request("tools/list")).action).toBe("deny");
  });
});

describe("explain()", () => {
  it("every matcher describes its condition", () => {
    const texts = buildMatchers({
      server: "*.example.com",
      method: "tools/call",
      tool: "re:^read",
      direction: "client_to_server",
      kind: "request",
      args: { "a.b": "x*" },
    }).map((m) => m.explain());
    expect(texts).toEqual([
      'server host matches "*.example.com"',
      'method matches "tools/call"',
      'tool matches "re:^read"',
      "direction is client_to_server",
      "kind is request",
      'argument "a.b" matches "x*"',
    ]);
    expect(buildMatchers({ server: "h:443" })[0]!.explain()).toBe('server matches "h:443"');
    expect(explainAll([])).toBe("every message");
    expect(explainAll(buildMatchers({ method: "ping", kind: "request" }))).toBe('method matches "ping" and kind is request');
  });

  it("explainRules marks each condition held or not", () => {
    const p = policyFrom(`${QUIET}rules:\n  - { name: no-env, action: deny, match: { method: tools/call, tool: get-env } }\n  - { name: any, action: flag }\n`);
    expect(p.explainRules(toolCall("echo"))).toEqual([
      { name: "no-env", action: "deny", matched: false, conditions: '✓ method matches "tools/call"; ✗ tool matches "get-env"' },
      { name: "any", action: "flag", matched: true, conditions: "every message" },
    ]);
  });
});

describe("mcp-wiretap policy explain", () => {
  let tmp: ReturnType<typeof tempDir>;
  let file: string;
  beforeAll(() => {
    tmp = tempDir();
    file = writePolicyFile(
      tmp.dir,
      `mode: enforce
rules:
  - name: no-env
    action: deny
    reason: leaks the environment
    match: { method: tools/call, tool: get-env }
  - name: local-only
    action: flag
    match: { server: "127.0.0.1" }
detectors: { secrets: deny }
`,
    );
  });
  afterAll(() => tmp.cleanup());

  it("(the built CLI) names the firing rules with their reasons, the conditions that held, the detector findings and the decision", async () => {
    const message = { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "get-env", arguments: { filter: `AWS_ACCESS_KEY_ID=${AWS_KEY_ID}` } } };
    const r = await runCli(["policy", "explain", file, "--message", JSON.stringify(message)]);
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).not.toContain(AWS_KEY_ID);
    expect(r.stdout).toBe(
      [
        "message: request tools/call (tool get-env), client_to_server, server mcp.example.com:443",
        "rules:",
        '  ✓ no-env (deny): ✓ method matches "tools/call"; ✓ tool matches "get-env"',
        '  ✗ local-only (flag): ✗ server host matches "127.0.0.1"',
        "fired:",
        "  no-env → deny: leaks the environment",
        "  detector:secrets → deny: secrets: aws_access_key_id (1 finding)",
        "      aws_access_key_id at /params/arguments/filter — AKIA…(20 chars)",
        "decision: deny (enforce mode: blocked)",
        "",
      ].join("\n"),
    );
  });

  it("--server and --method place a response: a rule on the host fires, a secret in the result is found", () => {
    const message = { jsonrpc: "2.0", id: 7, result: { content: [{ type: "text", text: `key ${AWS_KEY_ID}` }] } };
    const out = captureStdout(() => policyExplainCommand(file, { message: JSON.stringify(message), server: "127.0.0.1:3000", method: "tools/call" }));
    expect(out).toContain("message: response tools/call, server_to_client, server 127.0.0.1:3000");
    expect(out).toContain("  local-only → flag\n");
    expect(out).toMatch(/aws_access_key_id at \/result\/content\/0\/text — AKIA…\(20 chars\)/);
    expect(out).not.toContain(AWS_KEY_ID);
    // Nothing fires: said so.
    const quiet = captureStdout(() => policyExplainCommand(file, { message: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" }), server: "mcp.example.com:443" }));
    expect(quiet).toContain("fired:\n  (nothing)\ndecision: allow\n");
  });

  it("--json gives the rules, the decision with findings, and the message summary", () => {
    const message = { jsonrpc: "2.0", id: 7, result: { content: [{ type: "text", text: `key ${AWS_KEY_ID}` }] } };
    const text = captureStdout(() => policyExplainCommand(file, { message: JSON.stringify(message), server: "mcp.example.com:443", direction: "client_to_server", json: true }));
    expect(text).not.toContain(AWS_KEY_ID);
    const out = JSON.parse(text) as {
      message: Record<string, unknown>;
      rules: { name: string; matched: boolean; conditions: string }[];
      decision: { action: string; enforced: boolean; rules: { name: string; findings?: { type: string; path: string }[] }[] };
    };
    expect(out.message).toEqual({ kind: "response", method: null, tool: null, direction: "client_to_server", server: "mcp.example.com:443" });
    expect(out.rules).toEqual([
      { name: "no-env", action: "deny", matched: false, conditions: '✗ method matches "tools/call"; ✗ tool matches "get-env"' },
      { name: "local-only", action: "flag", matched: false, conditions: '✗ server host matches "127.0.0.1"' },
    ]);
    expect(out.decision.action).toBe("deny");
    expect(out.decision.enforced).toBe(true);
    expect(out.decision.rules).toHaveLength(1);
    expect(out.decision.rules[0]!.name).toBe("detector:secrets");
    expect(out.decision.rules[0]!.findings).toEqual([expect.objectContaining({ type: "aws_access_key_id", path: "/result/content/0/text" })]);
  });

  it("a message that is not JSON is refused (the CLI exits 2 with it)", () => {
    expect(() => policyExplainCommand(file, { message: "{nope", server: "mcp.example.com:443" })).toThrow(ExplainInputError);
    expect(() => policyExplainCommand(file, { message: "{nope", server: "mcp.example.com:443" })).toThrow(/^--message is not JSON: /);
  });
});
