/**
 * A member name given twice in one object, over HTTP. JSON.parse keeps the last value, other parsers the
 * first (or refuse the message): `{"name":"delete_everything","name":"echo"}` reads as `echo` to the
 * proxy and as `delete_everything` to a first-wins server. The stdio transport already refuses such a
 * line; the HTTP path must too, in both directions, for JSON bodies and for event-stream events. A member
 * named `__proto__` is the same kind of doubt for JavaScript receivers that copy the object.
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

/** The denied tool first, the allowed one last (JSON.parse reads the last). */
const twiceNamed = (id: number): string =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"delete_everything","name":"echo","arguments":{"message":"hi"}}}`;
/** The method twice: a first-wins reader sees a call of the denied tool. */
const twiceMethod = (id: number): string =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","method":"ping","params":{"name":"delete_everything","arguments":{}}}`;
/** Escaped so that a byte-level scan does not see the same spelling. */
const twiceEscaped = (id: number): string =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"delete_everything","n\\u0061me":"echo","arguments":{}}}`;

/**
 * The tool name only under `__proto__`: JSON.parse makes it an own member (the proxy sees no name), but
 * `Object.assign({}, params).name` in a JavaScript server reads `delete_everything` from the prototype.
 */
const protoNamed = (id: number): string =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"__proto__":{"name":"delete_everything"},"arguments":{}}}`;

/** A tool result with the key in the first `result` and a clean one last. */
const leakTwice = (id: unknown): string =>
  `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"key ${AWS_KEY_ID}"}]},"result":{"content":[{"type":"text","text":"nothing"}]}}`;

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

    const record = (id: number, direction: string): Promise<LogRecord> =>
      proxy.waitForRecord((r) => r.event === "rpc" && r.id === id && r.direction === direction, { what: `${direction} record for id ${id}` });

    for (const [name, body] of [
      ["the tool name twice (denied first, allowed last)", twiceNamed],
      ["the method twice", twiceMethod],
      ["the tool name twice, once escaped", twiceEscaped],
      ["the tool name under __proto__", protoNamed],
    ] as const) {
      it(`request with ${name}: ${mode === "enforce" ? "refused with -32052, never forwarded" : "forwarded and flagged"}`, async () => {
        const id = nextId++;
        const before = up.requests.length;
        const res = await client.post(url, body(id));
        const rec = await record(id, "client_to_server");
        expect(rec.readability).toMatchObject({ reason: expect.stringMatching(/appears twice in one object|"__proto__"/) });
        if (mode === "enforce") {
          expect(up.requests.length).toBe(before);
          expect(res.json).toMatchObject({ jsonrpc: "2.0", id, error: { code: -32052 } });
          expect(decisionOf(rec)).toMatchObject({ action: "deny", enforced: true });
        } else {
          expect(up.requests.length).toBe(before + 1);
          expect(up.requests.at(-1)!.body.toString()).toBe(body(id));
          expect(decisionOf(rec).rules).toContainEqual(expect.objectContaining({ name: "unreadable", action: "flag" }));
        }
      });
    }

    for (const sse of [false, true]) {
      it(`a result twice, the key in the first (${sse ? "event stream" : "JSON"}): ${mode === "enforce" ? "the client gets -32052" : "passed as sent, flagged"}`, async () => {
        const id = nextId++;
        mcp.setScript((m) => {
          const text = leakTwice(m.id);
          return sse
            ? { kind: "raw", body: Buffer.from(`event: message\ndata: ${text}\n\n`), headers: { "content-type": "text/event-stream" } }
            : { kind: "raw", body: Buffer.from(text), headers: { "content-type": "application/json" } };
        });
        const res = await client.post(url, { jsonrpc: "2.0", id, method: "tools/call", params: { name: "lookup", arguments: {} } });
        const rec = await record(id, "server_to_client");
        expect(rec.readability).toMatchObject({ reason: expect.stringContaining("appears twice in one object") });
        if (mode === "enforce") {
          expect(res.text).not.toContain(AWS_KEY_ID);
          const answer = sse ? sseData(res.text) : [res.json];
          expect(answer).toEqual([{ jsonrpc: "2.0", id, error: expect.objectContaining({ code: -32052 }) }]);
        } else {
          expect(res.text).toContain(AWS_KEY_ID);
        }
      });
    }

    it("an ordinary call with the same name in two different objects is untouched", async () => {
      const id = nextId++;
      const before = up.requests.length;
      const body = `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{"name":"x","message":"y"}}}`;
      await client.post(url, body);
      const rec = await record(id, "client_to_server");
      expect(rec.readability).toBeUndefined();
      expect(up.requests.length).toBe(before + 1);
    });
  });
}

describe("duplicate member names over HTTP", () => {
  suite("enforce");
  suite("monitor");
});
