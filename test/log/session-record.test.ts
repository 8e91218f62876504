/**
 * `session` records carry peer data (the initialize request's clientInfo and capabilities, the answer's
 * serverInfo and capabilities): they follow --payloads and --max-payload-bytes like `rpc` payloads, and
 * secrets in them are masked, through the real proxy and the log file it writes.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { ProxyAgent, fetch } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PayloadMode } from "../../src/log/payload.js";
import { startTestProxy, type LogRecord } from "../helpers/proxy-harness.js";

// Built at run time so that no complete key sits in the source.
const serverKey = `AKIA${randomBytes(8).toString("hex").toUpperCase()}`;
const clientKey = `AKIA${randomBytes(8).toString("hex").toUpperCase()}`;
const BIG = 4 * 1024 * 1024;

function initializeAnswer(id: unknown): string {
  return JSON.stringify({
    jsonrpc: "2.0",
    id,
    result: {
      protocolVersion: "2025-06-18",
      capabilities: { tools: {}, experimental: { blob: "x".repeat(BIG), note: `deploy with ${serverKey}` } },
      serverInfo: { name: "big-server", version: "1.0.0", description: `uses ${serverKey}` },
    },
  });
}

async function startUpstream(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const m = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { id?: unknown; method?: string };
      if (m.method !== "initialize") {
        res.writeHead(202, { "content-length": "0" });
        return void res.end();
      }
      const body = initializeAnswer(m.id);
      res.writeHead(200, { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)), "mcp-session-id": "big-session-1" });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const MAX = 2048;
const MODES: { payloads: PayloadMode; maxPayloadBytes: number }[] = [
  { payloads: "none", maxPayloadBytes: MAX },
  { payloads: "truncated", maxPayloadBytes: MAX },
  { payloads: "full", maxPayloadBytes: MAX },
];

describe.each(MODES)("session records (payloads: $payloads)", (mode) => {
  let logText = "";
  let sessionStart: LogRecord;
  let dir = "";

  beforeAll(async () => {
    const upstream = await startUpstream();
    dir = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-session-record-"));
    const logFile = path.join(dir, "log.ndjson");
    const proxy = await startTestProxy({ ...mode, logFile, maxInspectBytes: 8 * 1024 * 1024 });
    const agent = new ProxyAgent({ uri: proxy.url });
    try {
      const res = await fetch(upstream.url, {
        method: "POST",
        dispatcher: agent,
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-06-18", capabilities: { roots: {} }, clientInfo: { name: "test-client", version: "1", note: `key ${clientKey}` } },
        }),
      });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      await proxy.waitForRecord((r) => r.event === "session", { what: "session record" });
    } finally {
      await agent.close();
      await proxy.stop();
      await upstream.close();
    }
    logText = await readFile(logFile, "utf8");
    const records = logText.split("\n").filter(Boolean).map((l) => JSON.parse(l) as LogRecord);
    sessionStart = records.find((r) => r.event === "session" && r.phase === "start")!;
  }, 60_000);

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it("never writes a secret found in clientInfo, serverInfo or capabilities", () => {
    expect(sessionStart).toBeDefined();
    expect(logText).not.toContain(serverKey);
    expect(logText).not.toContain(clientKey);
  });

  if (mode.payloads === "none") {
    it("leaves clientInfo, serverInfo and capabilities out, with their size and hash", () => {
      for (const value of [sessionStart.clientInfo, sessionStart.serverInfo, (sessionStart.capabilities as { server: unknown }).server]) {
        expect(value).toMatchObject({ omitted: true, bytes: expect.any(Number), sha256: expect.stringMatching(/^[0-9a-f]{64}$|^sha256:/) });
      }
      expect((sessionStart.capabilities as { server: { bytes: number } }).server.bytes).toBeGreaterThan(BIG);
      expect(JSON.stringify(sessionStart).length).toBeLessThan(4096);
    });
  }

  if (mode.payloads === "truncated") {
    it("cuts what is larger than --max-payload-bytes to a preview, keeps what fits (masked)", () => {
      const server = (sessionStart.capabilities as { server: { truncated?: boolean; bytes?: number; preview?: string } }).server;
      expect(server.truncated).toBe(true);
      expect(server.bytes).toBeGreaterThan(BIG);
      expect(Buffer.byteLength(server.preview ?? "")).toBeLessThanOrEqual(MAX);
      expect(sessionStart.serverInfo).toEqual({ name: "big-server", version: "1.0.0", description: "[redacted: aws_access_key_id]" });
      expect(sessionStart.clientInfo).toEqual({ name: "test-client", version: "1", note: "[redacted: aws_access_key_id]" });
      for (const line of logText.split("\n")) expect(line.length).toBeLessThan(16 * 1024);
    });
  }

  if (mode.payloads === "full") {
    it("keeps what the secrets scan saw whole (masked), and only a preview of what lies past its bounds", () => {
      expect(sessionStart.serverInfo).toEqual({ name: "big-server", version: "1.0.0", description: "[redacted: aws_access_key_id]" });
      expect(sessionStart.clientInfo).toEqual({ name: "test-client", version: "1", note: "[redacted: aws_access_key_id]" });
      // A 4 MB string is beyond the scanner's 2,000,000 characters: the key after it was never looked at.
      const server = (sessionStart.capabilities as { server: { truncated?: boolean; bytes?: number; preview?: string } }).server;
      expect(server.truncated).toBe(true);
      expect(server.bytes).toBeGreaterThan(BIG);
      expect(Buffer.byteLength(server.preview ?? "")).toBeLessThanOrEqual(MAX);
    });
  }
});
