/**
 * What a server costs in tokens, from a recorded log: `stats --tokens` (definition tokens per tool, the
 * list's total, mean/p95 result tokens) and the CI gates `check --max-list-tokens` / `--max-result-tokens`.
 * The expected figures are counted here with the tokenizer itself, over the JSON the server sent.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { afterAll, describe, expect, it } from "vitest";
import { checkCommand } from "../../src/cli/check-command.js";
import { statsCommand } from "../../src/cli/stats-command.js";
import { capturedIo } from "../helpers/captured-io.js";

const dir = mkdtempSync(path.join(os.tmpdir(), "mcp-wiretap-tokens-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const allow = { action: "allow", enforced: false, rules: [] };
const echo = { name: "echo", description: "Echoes back the input.", inputSchema: { type: "object", properties: { message: { type: "string", description: "Message to echo" } }, required: ["message"] } };
const sum = { name: "get-sum", description: "Returns the sum of two numbers.", inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } } };
const results = [1, 2, 3, 40].map((n) => ({ content: [{ type: "text", text: `Echo: ${"word ".repeat(n)}` }] }));
let ms = 0;
const rec = (fields: Record<string, unknown>) => ({ level: "info", time: new Date(Date.UTC(2026, 10, 28, 4, 0, 0, ms++)).toISOString(), event: "rpc", transport: "streamable-http", server: "127.0.0.1:9443", session: "s1", protocolVersion: "2025-11-25", decision: allow, ...fields });
const log = [
  { level: "info", time: "2026-11-28T03:59:59.000Z", event: "start", version: "0.1.0" },
  rec({ flow: "l", direction: "client_to_server", kind: "request", id: 1, method: "tools/list", tool: null }),
  rec({ flow: "l", direction: "server_to_client", kind: "response", id: 1, method: "tools/list", tool: null, latencyMs: 3, result: { tools: [echo, sum] } }),
  ...results.flatMap((result, i) => [
    rec({ flow: `c${i}`, direction: "client_to_server", kind: "request", id: 10 + i, method: "tools/call", tool: "echo", params: { name: "echo", arguments: { message: "hi" } } }),
    rec({ flow: `c${i}`, direction: "server_to_client", kind: "response", id: 10 + i, method: "tools/call", tool: "echo", latencyMs: 2, result }),
  ]),
  { level: "info", time: "2026-11-28T04:00:01.000Z", event: "stop", reason: "SIGTERM" },
];
const file = path.join(dir, "run.ndjson");
writeFileSync(file, log.map((r) => JSON.stringify(r)).join("\n") + "\n");

const io = capturedIo;

const definitionTokens = { echo: countTokens(JSON.stringify(echo)), sum: countTokens(JSON.stringify(sum)) };
const resultTokens = results.map((r) => countTokens(JSON.stringify(r)));

describe("tokens a server costs", () => {
  it("stats --tokens: definition tokens per tool, the list's total, mean and p95 result tokens, named as an estimate", async () => {
    const { out, io: x } = io();
    expect(await statsCommand([file], { tokens: true }, x)).toBe(0);
    expect(out.stdout).toContain("Tokens (estimated with o200k_base; other models count differently)");
    expect(out.stdout).toContain(`tools/list of 127.0.0.1:9443: ${definitionTokens.echo + definitionTokens.sum} tokens for 2 tool definitions`);
    expect(out.stdout).toMatch(new RegExp(`^ +echo +${definitionTokens.echo}$`, "m"));
    expect(out.stdout).toMatch(new RegExp(`^ +get-sum +${definitionTokens.sum}$`, "m"));
    const mean = Math.round(resultTokens.reduce((a, b) => a + b, 0) / resultTokens.length);
    expect(out.stdout).toContain(`tools/call echo: 4 calls; result tokens mean ${mean}, p95 ${Math.max(...resultTokens)}, max ${Math.max(...resultTokens)}`);

    const json = io();
    expect(await statsCommand([file], { tokens: true, json: true }, json.io)).toBe(0);
    const report = JSON.parse(json.out.stdout) as { tokens: { encoding: string; estimate: boolean; lists: { total: number }[] } };
    expect(report.tokens).toMatchObject({ encoding: "o200k_base", estimate: true, lists: [{ total: definitionTokens.echo + definitionTokens.sum }] });
    // Not asked for: no tokens.
    const plain = io();
    expect(await statsCommand([file], { json: true }, plain.io)).toBe(0);
    expect(JSON.parse(plain.out.stdout)).not.toHaveProperty("tokens");
  });

  it("check --max-list-tokens and --max-result-tokens fail past the limit, pass under it", async () => {
    const total = definitionTokens.echo + definitionTokens.sum;
    const over = io();
    expect(await checkCommand([file], { maxListTokens: total - 1, maxResultTokens: Math.max(...resultTokens) - 1 }, over.io)).toBe(1);
    expect(over.out.stdout).toContain(`tools/list of 127.0.0.1:9443 is ${total} tokens (over --max-list-tokens ${total - 1}; estimated with o200k_base)`);
    expect(over.out.stdout).toMatch(new RegExp(`result-tokens .* id 13  tools/call echo: result is ${Math.max(...resultTokens)} tokens \\(over --max-result-tokens`));
    expect(over.out.stdout.match(/^result-tokens /gm)).toHaveLength(1);
    const under = io();
    expect(await checkCommand([file], { maxListTokens: total, maxResultTokens: Math.max(...resultTokens) }, under.io)).toBe(0);
    expect(under.out.stdout).toMatch(/list-tokens/);
  });
});
