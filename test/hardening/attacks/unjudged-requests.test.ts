/**
 * Request bodies the proxy could not read as one JSON-RPC message, each carrying a call of a denied tool
 * that a lenient server would run: a second JSON value after the first (Go's json.Decoder and Jackson read
 * the first and ignore the rest), trailing junk, NDJSON, an object id, no `jsonrpc` member, `jsonrpc: "1.0"`,
 * positional params, a batch nested in a batch. Before, each was forwarded in enforce mode, most with no
 * `rpc` record at all. Enforce mode now refuses them (-32052) and records them; monitor mode forwards them
 * and records the first value's method and tool.
 */
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { LogRecord, TestProxy } from "../../helpers/proxy-harness.js";
import type { ScriptedUpstream } from "../../helpers/scripted-mcp-upstream.js";
import { AWS_KEY_ID, defaultScript, type ScriptedMcp } from "../../policy/scripted-server.js";
import { sseData, type WireClient } from "../../policy/wire-client.js";
import { wireScenario } from "../../policy/wire-scenario.js";

const RULES = `rules:
  - name: no-delete
    action: deny
    reason: destructive
    match: { tool: delete_everything }
detectors: { secrets: deny, poisoning: deny }
`;

type Decision = { action: string; enforced: boolean; rules: { name: string; action: string }[] };
const decisionOf = (r: LogRecord): Decision => r.decision as Decision;
const denied = (id: unknown): string => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"delete_everything","arguments":{}}}`;
const allowed = (id: unknown): string => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"message":"x"}}}`;

interface Case {
  name: string;
  body(id: number): string;
  /** What the record of the request says in monitor mode (the first value's reading). */
  monitor: Record<string, unknown>;
}

const CASES: Case[] = [
  { name: "a denied call followed by an allowed one", body: (id) => denied(id) + allowed(id + 1), monitor: { kind: "request", tool: "delete_everything" } },
  { name: "an allowed call followed by a denied one", body: (id) => allowed(id) + denied(id + 1), monitor: { kind: "request", tool: "echo" } },
  { name: "two calls as NDJSON", body: (id) => `${denied(id)}\n${allowed(id + 1)}\n`, monitor: { kind: "request", tool: "delete_everything" } },
  { name: "a denied call and trailing junk", body: (id) => `${denied(id)} ]]`, monitor: { kind: "request", tool: "delete_everything" } },
  { name: "an id that is an object", body: () => denied('{"n":1}'), monitor: { kind: "invalid", method: "tools/call" } },
  { name: "no jsonrpc member", body: (id) => `{"id":${id},"method":"tools/call","params":{"name":"delete_everything","arguments":{}}}`, monitor: { kind: "invalid", method: "tools/call" } },
  { name: 'jsonrpc "1.0"', body: (id) => `{"jsonrpc":"1.0","id":${id},"method":"tools/call","params":{"name":"delete_everything","arguments":{}}}`, monitor: { kind: "invalid", method: "tools/call" } },
  { name: "positional params", body: (id) => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":["delete_everything",{}]}`, monitor: { kind: "invalid", method: "tools/call" } },
  { name: "a batch nested in a batch", body: (id) => `[[${denied(id)}]]`, monitor: { kind: "invalid" } },
];

/** The first client→server rpc record written after the first `seen` records. */
async function newRequestRecord(proxy: TestProxy, seen: number): Promise<LogRecord> {
  for (let i = 0; i < 100; i++) {
    const found = (await proxy.records()).slice(seen).find((r) => r.event === "rpc" && r.direction === "client_to_server");
    if (found) return found;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("no rpc record for the request");
}

function suite(mode: "enforce" | "monitor"): void {
  describe(`${mode} mode`, () => {
    let up: ScriptedUpstream;
    let mcp: ScriptedMcp;
    let proxy: TestProxy;
    let client: WireClient;
    let url: string;
    let nextId = mode === "enforce" ? 100 : 200;
    const scenario = wireScenario(`mode: ${mode}\n${RULES}`);
    beforeAll(() => void ({ up, mcp, proxy, client, url } = scenario));
    beforeEach(() => mcp.setScript(defaultScript));

    for (const c of CASES) {
      it(`${c.name}: ${mode === "enforce" ? "refused, never forwarded" : "forwarded and recorded"}`, async () => {
        const id = nextId;
        nextId += 2;
        const before = up.requests.length;
        const seen = (await proxy.records()).length;
        const res = await client.post(url, c.body(id));
        const rec = await newRequestRecord(proxy, seen);
        if (mode === "enforce") {
          expect(up.requests.length).toBe(before);
          const answer = (Array.isArray(res.json) ? res.json : [res.json]) as Record<string, unknown>[];
          expect(answer[0]).toMatchObject({ jsonrpc: "2.0", error: { code: -32052 } });
          expect(decisionOf(rec)).toMatchObject({ action: "deny", enforced: true });
          expect(decisionOf(rec).rules).toContainEqual(expect.objectContaining({ name: "unreadable", action: "deny" }));
        } else {
          expect(up.requests.length).toBe(before + 1);
          expect(up.requests.at(-1)!.body.toString()).toBe(c.body(id));
          expect(rec).toMatchObject(c.monitor);
        }
      });
    }

    it("a result followed by a second one in the same event: the client never reads the key", async () => {
      const id = nextId++;
      mcp.setScript((m) => {
        const first = JSON.stringify({ jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: `key ${AWS_KEY_ID}` }] } });
        const second = JSON.stringify({ jsonrpc: "2.0", id: m.id, result: { content: [] } });
        return { kind: "raw", body: Buffer.from(`event: message\ndata: ${first}${second}\n\n`), headers: { "content-type": "text/event-stream" } };
      });
      const res = await client.post(url, { jsonrpc: "2.0", id, method: "tools/call", params: { name: "lookup", arguments: {} } });
      const rec = await proxy.waitForRecord((r) => r.event === "rpc" && r.id === id && r.direction === "server_to_client", { what: "the response record" });
      expect(rec).toMatchObject({ kind: "response", method: "tools/call" });
      expect(decisionOf(rec).rules.map((r) => r.name)).toContain("detector:secrets");
      if (mode === "enforce") {
        expect(res.text).not.toContain(AWS_KEY_ID);
        expect(sseData(res.text)).toEqual([{ jsonrpc: "2.0", id, error: expect.objectContaining({ code: -32052 }) }]);
      } else {
        expect(res.text).toContain(AWS_KEY_ID);
      }
    });
  });
}

describe("request bodies that are not one JSON-RPC message", () => {
  suite("enforce");
  suite("monitor");
});
