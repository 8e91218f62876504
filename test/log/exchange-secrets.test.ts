/** Credentials seen on an exchange, removed by value from every record of it (and of its session). */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ExchangeSecrets } from "../../src/log/exchange-secrets.js";
import { headerCredentials, scrubValues } from "../../src/log/redact.js";
import type { Exchange } from "../../src/proxy/exchange.js";

const rand = () => randomBytes(8).toString("hex");

describe("credentials removed by value", () => {
  it("collects the credentials a request's headers carried, Basic passwords included", () => {
    const secret = `canary-${rand()}`;
    const found = headerCredentials({
      authorization: `Bearer ${secret}-bearer`,
      "proxy-authorization": `Basic ${Buffer.from(`user:${secret}-basic`).toString("base64")}`,
      cookie: `sid=${secret}-cookie; theme=dark`,
      "x-api-key": `${secret}-key`,
      "content-type": "application/json",
      "mcp-session-id": "session-id-kept-visible",
    });
    expect(found).toEqual(expect.arrayContaining([`${secret}-bearer`, `${secret}-basic`, `${secret}-cookie`, `${secret}-key`]));
    expect(found).not.toContain("dark"); // too short to remove by value
    expect(found).not.toContain("session-id-kept-visible");
    expect(found).not.toContain("application/json");
  });

  it("replaces them in every string of a record, leaving everything else", () => {
    const secret = `canary-${rand()}`;
    const record = { a: `token ${secret} expired`, b: [secret, 1, null], c: { d: `x${secret}y`, e: true }, f: "unrelated" };
    expect(scrubValues(record, [secret])).toEqual({
      a: "token [redacted] expired",
      b: ["[redacted]", 1, null],
      c: { d: "x[redacted]y", e: true },
      f: "unrelated",
    });
    expect(record.a).toContain(secret); // not modified in place
  });

  it("never lets a peer erase what identifies its message: method, tool, server, decision stay", () => {
    const record = {
      event: "rpc", flow: "f1", server: "mcp.example:443", method: "tools/call", tool: "deploy-production", id: "deploy-production",
      decision: { action: "deny", rules: [{ name: "no-deploy", reason: "deploy-production is denied" }] },
      params: { name: "deploy-production", note: "tools/call deploy-production" },
    };
    const out = scrubValues(record, ["deploy-production", "tools/call"]);
    expect(out).toMatchObject({ method: "tools/call", tool: "deploy-production", id: "deploy-production", server: "mcp.example:443", decision: record.decision });
    expect(out.params).toEqual({ name: "[redacted]", note: "[redacted] [redacted]" });
    const unchanged = { event: "rpc", params: { a: "b" } };
    expect(scrubValues(unchanged, ["nothing-here"])).toBe(unchanged); // nothing matched: no copy
  });

  it("keeps each exchange's credentials for its records, its session's, and records written after it ended", () => {
    const secrets = new ExchangeSecrets();
    const bearer = `canary-${rand()}`;
    const member = `canary-${rand()}`;
    const exchange = (id: string, headers: Record<string, string>, p = "/mcp") =>
      ({ id, request: { method: "POST", path: p, httpVersion: "1.1", headers } }) as unknown as Exchange;
    secrets.begin(exchange("flow-a", { authorization: `Bearer ${bearer}`, "mcp-session-id": "s-1" }, `/mcp?sig=${member}-q`));
    secrets.add("flow-a", "s-1", [member]);
    secrets.begin(exchange("flow-b", { "mcp-session-id": "s-1", authorization: "Bearer short" }));
    const text = (r: Record<string, unknown>) => JSON.stringify(secrets.scrub(r));
    expect(text({ flow: "flow-a", error: { message: `bad token ${bearer}, ${member}-q, ${member}` } })).not.toContain("canary-");
    // Another exchange of the same session (an event stream) quoting them.
    expect(text({ flow: "flow-b", session: "s-1", result: `${bearer} ${member}` })).not.toContain("canary-");
    // Too short to remove by value ("short" is 5 characters), and other exchanges untouched.
    expect(text({ flow: "flow-b", result: "Bearer short" })).toContain("short");
    expect(text({ flow: "flow-c", result: bearer })).toContain(bearer);
    secrets.end("flow-a");
    expect(text({ flow: "flow-a", challenge: bearer })).not.toContain(bearer); // an auth record written after the end
  });

  it("learns a body's credentials after the exchange ended, and says when they are known", async () => {
    const secrets = new ExchangeSecrets();
    const code = `canary-${rand()}`;
    secrets.begin({ id: "flow-z", request: { path: "/token", headers: {} } });
    let finish!: (values: string[]) => void;
    secrets.willLearn("flow-z", new Promise<string[]>((resolve) => (finish = resolve)));
    secrets.end("flow-z");
    const known = secrets.known("flow-z");
    expect(known).toBeDefined();
    expect(secrets.known("flow-other")).toBeUndefined();
    finish([code]);
    await known;
    expect(JSON.stringify(secrets.scrub({ flow: "flow-z", responseHeaders: { "x-debug": `got ${code}` } }))).not.toContain(code);
    expect(secrets.known("flow-z")).toBeUndefined();
    // A reading that fails still settles: the records waiting on it are written.
    secrets.willLearn("flow-y", Promise.reject(new Error("decoder")));
    await expect(secrets.known("flow-y")).resolves.toBeUndefined();
  });

  it("ended exchanges' credentials are bounded in characters as well as in count, oldest out first", () => {
    const secrets = new ExchangeSecrets({ maxEndedChars: 1_000_000 });
    const values = Array.from({ length: 20 }, (_, i) => `${i}-${"s".repeat(100_000)}`);
    for (const [i, value] of values.entries()) {
      secrets.begin({ id: `flow-${i}`, request: { path: "/token", headers: {} } });
      secrets.add(`flow-${i}`, null, [value]);
      secrets.end(`flow-${i}`);
      expect(secrets.endedChars).toBeLessThanOrEqual(1_000_000);
    }
    const scrubbed = (i: number) => JSON.stringify(secrets.scrub({ flow: `flow-${i}`, text: values[i] })).includes("[redacted]");
    expect(scrubbed(19)).toBe(true);
    expect(scrubbed(0)).toBe(false);
  });
});

