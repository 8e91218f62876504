/**
 * Peer-supplied names that are Object.prototype members ("__proto__", "constructor", "toString",
 * "hasOwnProperty") are data everywhere the policy keeps or reads state by name: rate-limit budgets,
 * argument conditions, and the stateless revision's header checks.
 */
import { afterEach, describe, expect, it } from "vitest";
import { headerMismatches } from "../../src/mcp/stateless-headers.js";
import { policyFrom, toolCall } from "./policy-fixtures.js";

const QUIET = "detectors: { secrets: off, pii: off, hiddenText: off, poisoning: off, toolPinning: off, schema: off }\n";
const NAMES = ["__proto__", "constructor", "toString", "hasOwnProperty"];

describe("Object.prototype names from peers", () => {
  const prototypeBefore = Object.getOwnPropertyNames(Object.prototype).sort();
  afterEach(() => {
    expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(prototypeBefore);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("rate limits: sessions and servers with such names each get their own budget", () => {
    const policy = policyFrom(`mode: enforce\n${QUIET}rateLimits:\n  - { name: calls, match: { method: tools/call }, perMinute: 2, per: session }\n`);
    for (const name of NAMES) {
      const where = { server: `${name}:443`, session: name };
      expect(policy.judge(toolCall(name, {}, where)).action, name).toBe("allow");
      expect(policy.judge(toolCall(name, {}, where)).action, name).toBe("allow");
      expect(policy.judge(toolCall(name, {}, where)).action, name).toBe("deny");
    }
  });

  it("argument conditions read own members only: a rule on opts.__proto__ or opts.constructor does not match {}", () => {
    const policy = policyFrom(
      `mode: enforce\n${QUIET}rules:\n  - { name: proto, action: deny, match: { args: { "opts.__proto__": "*" } } }\n  - { name: ctor, action: deny, match: { args: { "opts.constructor": "*" } } }\n`,
    );
    expect(policy.judge(toolCall("echo", { opts: {} })).rules).toEqual([]);
    expect(policy.judge(toolCall("echo", { opts: { toString: "x" } })).rules).toEqual([]);
    const own = policy.judge(toolCall("echo", { opts: JSON.parse('{"__proto__": "planted", "constructor": "c"}') as Record<string, unknown> }));
    expect(own.rules.map((r) => r.name)).toEqual(["proto", "ctor"]);
  });

  it('an argument path "__proto__" in the policy file is refused (a schema library would drop it, leaving a rule that matches everything)', () => {
    expect(() => policyFrom(`${QUIET}rules:\n  - { name: proto, action: deny, match: { args: { "__proto__": "*" } } }\n`)).toThrow(
      /test\.yaml:3:\d+: rules\[0\]\.match\.args: argument path "__proto__" is not supported/,
    );
  });

  it("stateless header checks: a method named constructor is not taken for a named method", () => {
    for (const method of NAMES) {
      expect(headerMismatches({ "mcp-method": method, "mcp-name": "x" }, { jsonrpc: "2.0", id: 1, method, params: {} }), method).toBeUndefined();
    }
    expect(headerMismatches({ "mcp-method": "tools/call", "mcp-name": "x" }, { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "y" } })).toEqual([
      { header: "Mcp-Name", headerValue: "x", bodyValue: "y" },
    ]);
  });
});
