/**
 * Bodies the proxy could read differently from their receiver (invalid UTF-8, a content coding that does
 * not decode or is unknown, a charset other than UTF-8), both ways, JSON and event streams. Peers are
 * lenient: they replace bad bytes and ignore codings they do not expect. Enforce mode refuses such a message
 * with its own error (-32052) and the upstream or the client never sees it; monitor mode forwards it and
 * records the lenient reading (method and tool), saying why it is ambiguous. Every reading is judged.
 */
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { LogRecord, TestProxy } from "../helpers/proxy-harness.js";
import type { ScriptedUpstream } from "../helpers/scripted-mcp-upstream.js";
import { AWS_KEY_ID, CLEAN_TOOLS, defaultScript, LISTED_TOOLS, type ScriptedMcp } from "./scripted-server.js";
import { sseData, type WireClient } from "./wire-client.js";
import { wireScenario } from "./wire-scenario.js";

const RULES = `rules:
  - name: no-delete
    action: deny
    reason: destructive
    match: { tool: delete_everything }
detectors: { secrets: deny, poisoning: deny }
`;

const isRpc = (r: LogRecord): boolean => r.event === "rpc";
type Decision = { action: string; enforced: boolean; effect?: string; rules: { name: string; action: string; reason?: string }[] };
const decisionOf = (r: LogRecord): Decision => r.decision as Decision;
const ruleNames = (r: LogRecord): string[] => decisionOf(r).rules.map((x) => x.name);

const JSON_TYPE = { "content-type": "application/json" };
const SSE_TYPE = { "content-type": "text/event-stream" };

/** `text` as UTF-8 with one 0xFF byte inserted before the first occurrence of `before`. */
function withBadByte(text: string, before: string): Buffer {
  const at = Buffer.from(text.slice(0, text.indexOf(before)));
  return Buffer.concat([at, Buffer.from([0xff]), Buffer.from(text.slice(text.indexOf(before)))]);
}

interface RequestCase {
  name: string;
  body(id: number): Buffer;
  headers: Record<string, string>;
  /** The tool the lenient reading names. */
  tool: string;
}

const deniedCall = (id: number, note = "ok"): string =>
  JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "delete_everything", arguments: { note } } });

const REQUEST_CASES: RequestCase[] = [
  { name: "invalid UTF-8 in an argument", body: (id) => withBadByte(deniedCall(id, "a-b"), "-b"), headers: JSON_TYPE, tool: "delete_everything" },
  {
    name: "invalid UTF-8 inside the denied tool name",
    body: (id) => withBadByte(deniedCall(id), "everything"),
    headers: JSON_TYPE,
    tool: "delete_\ufffdeverything",
  },
  { name: "plain JSON labelled gzip", body: (id) => Buffer.from(deniedCall(id)), headers: { ...JSON_TYPE, "content-encoding": "gzip" }, tool: "delete_everything" },
  { name: "an unknown coding (x-foo)", body: (id) => Buffer.from(deniedCall(id)), headers: { ...JSON_TYPE, "content-encoding": "x-foo" }, tool: "delete_everything" },
  { name: "a coding list (gzip, br)", body: (id) => Buffer.from(deniedCall(id)), headers: { ...JSON_TYPE, "content-encoding": "gzip, br" }, tool: "delete_everything" },
  {
    // JSON.parse (and the proxy) reads the last name; a parser that keeps the first runs `lookup`, or the reverse.
    name: "a member name given twice (lookup, then delete_everything)",
    body: (id) => Buffer.from(`{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"lookup","name":"delete_everything","arguments":{}}}`),
    headers: JSON_TYPE,
    tool: "delete_everything",
  },
  {
    name: "UTF-16LE under charset=utf-16le",
    body: (id) => Buffer.from(deniedCall(id), "utf16le"),
    headers: { "content-type": "application/json; charset=utf-16le" },
    tool: "delete_everything",
  },
];

interface ResponseCase {
  name: string;
  method: "tools/list" | "tools/call";
  /** The reply for request `id`. */
  reply(id: unknown): { body: Buffer; headers: Record<string, string> };
  /** Text the client must never see in enforce mode. */
  hidden: string;
  sse: boolean;
}

const toolsList = (id: unknown): string => JSON.stringify({ jsonrpc: "2.0", id, result: { tools: LISTED_TOOLS } });
const leak = (id: unknown): string => JSON.stringify({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text: `key ${AWS_KEY_ID}` }] } });
const asEvent = (data: Buffer): Buffer => Buffer.concat([Buffer.from("event: message\nid: u1\ndata: "), data, Buffer.from("\n\n")]);

/** The first tool's name given twice: a reader that keeps the first sees another tool than JSON.parse does. */
const nameTwice = (json: string): string => json.replace('"name":', '"name":"other","name":');

const RESPONSE_CASES: ResponseCase[] = [
  { name: "poisoned tools/list with invalid UTF-8 (JSON)", method: "tools/list", sse: false, hidden: "id_rsa", reply: (id) => ({ body: withBadByte(toolsList(id), "Echoes"), headers: JSON_TYPE }) },
  { name: "poisoned tools/list labelled gzip (JSON)", method: "tools/list", sse: false, hidden: "id_rsa", reply: (id) => ({ body: Buffer.from(toolsList(id)), headers: { ...JSON_TYPE, "content-encoding": "gzip" } }) },
  { name: "poisoned tools/list labelled gzip (event stream)", method: "tools/list", sse: true, hidden: "id_rsa", reply: (id) => ({ body: asEvent(Buffer.from(toolsList(id))), headers: { ...SSE_TYPE, "content-encoding": "gzip" } }) },
  { name: "poisoned tools/list with a member name twice (JSON)", method: "tools/list", sse: false, hidden: "id_rsa", reply: (id) => ({ body: Buffer.from(nameTwice(toolsList(id))), headers: JSON_TYPE }) },
  { name: "poisoned tools/list with a member name twice (event stream)", method: "tools/list", sse: true, hidden: "id_rsa", reply: (id) => ({ body: asEvent(Buffer.from(nameTwice(toolsList(id)))), headers: SSE_TYPE }) },
  { name: "a secret split by an invalid byte (JSON)", method: "tools/call", sse: false, hidden: AWS_KEY_ID.slice(6), reply: (id) => ({ body: withBadByte(leak(id), AWS_KEY_ID.slice(4)), headers: JSON_TYPE }) },
  { name: "a secret split by an invalid byte (event stream)", method: "tools/call", sse: true, hidden: AWS_KEY_ID.slice(6), reply: (id) => ({ body: asEvent(withBadByte(leak(id), AWS_KEY_ID.slice(4))), headers: SSE_TYPE }) },
  { name: "a secret labelled x-foo (JSON)", method: "tools/call", sse: false, hidden: AWS_KEY_ID, reply: (id) => ({ body: Buffer.from(leak(id)), headers: { ...JSON_TYPE, "content-encoding": "x-foo" } }) },
  { name: "a secret in UTF-16LE under charset=utf-16le (JSON)", method: "tools/call", sse: false, hidden: AWS_KEY_ID, reply: (id) => ({ body: Buffer.from(leak(id), "utf16le"), headers: { "content-type": "application/json; charset=utf-16le" } }) },
  { name: "a secret labelled gzip, br (event stream)", method: "tools/call", sse: true, hidden: AWS_KEY_ID, reply: (id) => ({ body: asEvent(Buffer.from(leak(id))), headers: { ...SSE_TYPE, "content-encoding": "gzip, br" } }) },
];

function suite(mode: "enforce" | "monitor"): void {
  describe(`${mode} mode`, () => {
    let up: ScriptedUpstream;
    let mcp: ScriptedMcp;
    let proxy: TestProxy;
    let client: WireClient;
    let url: string;
    let nextId = mode === "enforce" ? 1000 : 2000;
    const scenario = wireScenario(`mode: ${mode}\n${RULES}`);
    beforeAll(() => void ({ up, mcp, proxy, client, url } = scenario));
    beforeEach(() => mcp.setScript(defaultScript));

    const calls = (): number => up.requests.filter((r) => r.body.includes("tools/call") || r.body.includes(Buffer.from("tools/call", "utf16le"))).length;
    const record = (id: number, direction: string): Promise<LogRecord> =>
      proxy.waitForRecord((r) => isRpc(r) && r.id === id && r.direction === direction, { what: `${direction} record for id ${id}` });

    describe("client → server", () => {
      for (const c of REQUEST_CASES) {
        it(`${c.name}: ${mode === "enforce" ? "refused with -32052, never forwarded" : "forwarded, recorded with method and tool"}`, async () => {
          const before = calls();
          const id = nextId++;
          const res = await client.post(url, c.body(id), c.headers);
          const rec = await record(id, "client_to_server");
          expect(rec).toMatchObject({ kind: "request", method: "tools/call", tool: c.tool });
          expect(rec.readability).toMatchObject({ reason: expect.any(String) });
          expect(ruleNames(rec)).toContain("no-delete");
          if (mode === "enforce") {
            expect(calls()).toBe(before);
            expect(res.status).toBe(200);
            expect(res.json).toEqual({
              jsonrpc: "2.0",
              id,
              error: { code: -32052, message: `mcp-wiretap: message cannot be read unambiguously: ${(rec.readability as { reason: string }).reason}`, data: { reason: (rec.readability as { reason: string }).reason } },
            });
            expect(decisionOf(rec)).toMatchObject({ action: "deny", enforced: true, effect: "not forwarded; the client got a policy error" });
            expect(decisionOf(rec).rules).toContainEqual(expect.objectContaining({ name: "unreadable", action: "deny" }));
          } else {
            expect(calls()).toBe(before + 1);
            expect(up.requests.at(-1)!.body.equals(c.body(id))).toBe(true);
            expect(decisionOf(rec)).toMatchObject({ action: "deny", enforced: false });
            expect(decisionOf(rec).rules).toContainEqual(expect.objectContaining({ name: "unreadable", action: "flag" }));
          }
        });
      }
    });

    describe("server → client", () => {
      for (const c of RESPONSE_CASES) {
        it(`${c.name}: ${mode === "enforce" ? "the client gets -32052 instead" : "passed as sent, recorded with method and tool"}`, async () => {
          const id = nextId++;
          let sent: Buffer | undefined;
          mcp.setScript((m) => {
            const r = c.reply(m.id);
            sent = r.body;
            return { kind: "raw", ...r };
          });
          const req = c.method === "tools/list" ? { jsonrpc: "2.0", id, method: "tools/list" } : { jsonrpc: "2.0", id, method: "tools/call", params: { name: "lookup", arguments: {} } };
          const res = await client.post(url, req);
          const rec = await record(id, "server_to_client");
          expect(rec).toMatchObject({ kind: "response", method: c.method });
          expect(rec.readability).toMatchObject({ reason: expect.any(String) });
          if (mode === "enforce") {
            expect(res.text).not.toContain(c.hidden);
            expect(res.headers["content-encoding"]).toBeUndefined();
            expect(res.headers["content-type"]).toBe(c.sse ? "text/event-stream" : "application/json");
            const answer = c.sse ? sseData(res.text) : [res.json];
            expect(answer).toEqual([{ jsonrpc: "2.0", id, error: expect.objectContaining({ code: -32052, data: { reason: expect.any(String) } }) }]);
            expect(decisionOf(rec)).toMatchObject({ action: "deny", enforced: true });
            expect(decisionOf(rec).rules).toContainEqual(expect.objectContaining({ name: "unreadable", action: "deny" }));
          } else {
            expect(res.body.equals(sent!)).toBe(true);
            expect(decisionOf(rec)).toMatchObject({ action: "deny", enforced: false });
          }
          // Every reading was judged: the detector found what the lenient reading (or the other) shows.
          expect(ruleNames(rec)).toContain(c.method === "tools/list" ? "detector:poisoning" : "detector:secrets");
        });
      }
    });

    it("a body no reading makes JSON of, under a coding the proxy does not know: refused in enforce mode (a receiver may know it)", async () => {
      const garbage = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x58, 0x61, 0x00]);
      const before = up.requests.length;
      const res = await client.post(url, garbage, { ...JSON_TYPE, "content-encoding": "x-foo" });
      const rec = await proxy.waitForRecord((r) => isRpc(r) && r.kind === "invalid" && r.direction === "client_to_server" && r.readability !== undefined, { what: "unreadable request record" });
      expect(rec.readability).toMatchObject({ reason: expect.stringContaining('content-encoding "x-foo" is not one the proxy can decode; read as sent') });
      if (mode === "enforce") {
        expect(up.requests.length).toBe(before);
        expect(res.json).toEqual({ jsonrpc: "2.0", id: null, error: expect.objectContaining({ code: -32052 }) });
        expect(decisionOf(rec)).toMatchObject({ action: "deny", enforced: true });
      } else {
        expect(up.requests.length).toBe(before + 1);
        expect(decisionOf(rec)).toMatchObject({ action: "flag", enforced: false });
      }

      const id = nextId++;
      mcp.setScript(() => ({ kind: "raw", body: garbage, headers: { ...JSON_TYPE, "content-encoding": "x-foo" } }));
      const answer = await client.post(url, { jsonrpc: "2.0", id, method: "tools/list" });
      const unread = await proxy.waitForRecord((r) => isRpc(r) && r.kind === "invalid" && r.direction === "server_to_client" && r.readability !== undefined, { what: "unreadable response record" });
      expect(unread.readability).toBeDefined();
      if (mode === "enforce") expect(answer.json).toEqual({ jsonrpc: "2.0", id, error: expect.objectContaining({ code: -32052 }) });
      else expect(answer.body.equals(garbage)).toBe(true);
    });

    it("the log never carries the key, not even the part after the bad byte (findings of every reading mask the payload)", () => {
      const log = readFileSync(proxy.logFile, "utf8");
      expect(log).not.toContain(AWS_KEY_ID.slice(5));
    });

    it("ordinary traffic is untouched: a clean gzip JSON answer and a UTF-8 BOM body are read as they are", async () => {
      const id = nextId++;
      mcp.setScript((m) => ({ kind: "raw", body: gzipSync(JSON.stringify({ jsonrpc: "2.0", id: m.id, result: { tools: CLEAN_TOOLS } })), headers: { ...JSON_TYPE, "content-encoding": "gzip" } }));
      const res = await client.post(url, { jsonrpc: "2.0", id, method: "tools/list" });
      expect(res.body.equals(mcp.sent.at(-1)!)).toBe(true);
      const rec = await record(id, "server_to_client");
      expect(rec.readability).toBeUndefined();
      expect(ruleNames(rec)).not.toContain("unreadable");

      mcp.setScript(defaultScript);
      const echo = nextId++;
      const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: echo, method: "tools/call", params: { name: "echo", arguments: { message: "é" } } }))]);
      const before = calls();
      await client.post(url, body, { "content-type": "application/json; charset=UTF-8" });
      expect(calls()).toBe(before + 1);
      const req = await record(echo, "client_to_server");
      expect(req).toMatchObject({ method: "tools/call", tool: "echo" });
      expect(req.readability).toBeUndefined();
      expect(ruleNames(req)).not.toContain("unreadable");
    });
  });
}

describe("bodies that cannot be read unambiguously", () => {
  suite("enforce");
  suite("monitor");
});
