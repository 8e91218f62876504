/**
 * An event stream that ends in an unterminated block over 64 KiB (read for its field lines only, on the
 * bytes, in monitor mode) carrying `retry:`, in enforce mode: the proxy judges the tail as the event a reader
 * that dispatches what it has at the end makes of it, and the client receives exactly that judgement: a clean
 * message passed on as received, with its record; a message holding a credential not at all (its retry line
 * neither); a block of field lines alone, with no message in it, as received.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_JSON_VALUES } from "../../../src/body/limits.js";
import { startTestProxy, type LogRecord, type TestProxy } from "../../helpers/proxy-harness.js";
import { tempDir, writePolicyFile } from "../../policy/policy-fixtures.js";

const KEY = ["AKIA", "Z3M5Q7K2W9R4X6BT"].join("");
const PAD = "x".repeat(70 * 1024);
const head = `event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "ok" }] } })}\n\n`;
type Kind = "clean" | "secret" | "no data" | "many values";
const tail = (kind: Kind): string =>
  kind === "no data"
    ? `: ${PAD}\nretry: 7000\nid: t1`
    : kind === "many values"
      ? `retry: 7000\nid: t1\ndata: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":[${"1,".repeat(MAX_JSON_VALUES)}1]}}`
    : `retry: 7000\nid: t1\ndata: ${JSON.stringify({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: `${kind === "secret" ? `key=${KEY} ` : ""}${PAD}` } })}`;
const kindOf = (url: string | undefined): Kind => (["clean", "secret", "no data", "many values"] as Kind[]).find((k) => url?.endsWith(k.replace(" ", ""))) ?? "clean";

describe("an SSE response ending in an unterminated block over 64 KiB with a retry line, enforce mode", () => {
  let upstream: http.Server;
  let upstreamHost: string;
  let proxy: TestProxy;
  const tmp = tempDir();

  beforeAll(async () => {
    upstream = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(head);
        res.end(tail(kindOf(req.url)));
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    upstreamHost = `127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    proxy = await startTestProxy({ config: writePolicyFile(tmp.dir, "mode: enforce\ndetectors: { secrets: deny }\n", "enforce.yaml") });
  });
  afterAll(async () => {
    await proxy?.stop();
    await new Promise<void>((resolve) => upstream?.close(() => resolve()));
    tmp.cleanup();
  });

  const post = (path: string): Promise<string> =>
    new Promise((resolve, reject) => {
      const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", arguments: {} } });
      const req = http.request(
        { host: "127.0.0.1", port: proxy.port, method: "POST", path: `http://${upstreamHost}${path}`, agent: false, headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => resolve(Buffer.concat(chunks).toString()));
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      req.end(body);
    });

  for (const kind of ["clean", "secret", "no data", "many values"] as Kind[]) {
    it(`the tail is ${{ clean: "a clean message", secret: "a message holding a credential", "no data": "field lines only", "many values": `a message of more than ${MAX_JSON_VALUES} JSON values` }[kind]}`, async () => {
      const path = `/mcp?${kind.replace(" ", "")}`;
      const got = await post(path);
      await proxy.waitForRecord((r) => r.event === "http" && r.path === path, { timeoutMs: 5_000 });
      const recs = (await proxy.records()).filter((r: LogRecord) => r.path === path && r.direction === "server_to_client");
      const answer = recs.find((r) => r.kind === "response");
      expect(answer).toMatchObject({ id: 1, decision: { action: "allow" } });
      expect(got.startsWith(head)).toBe(true);
      const sentTail = got.slice(head.length);
      expect(got).not.toContain(KEY);
      if (kind === "many values") {
        // Not read, so not passed on: its retry line neither.
        expect(recs.find((r) => r.kind === "invalid")).toMatchObject({ decision: { action: "deny", enforced: true } });
        expect(sentTail).not.toMatch(/retry|id: t1|data:/);
      } else if (kind === "secret") {
        // Judged as the event a dispatching reader makes of it, denied: none of its lines, its retry included, reaches the client.
        expect(recs.find((r) => r.sseEventId === "t1")).toMatchObject({ kind: "notification", decision: { action: "deny", enforced: true } });
        expect(sentTail).not.toMatch(/retry|id: t1|data:/);
      } else if (kind === "clean") {
        // Passed on as received, after the record of the event it is.
        expect(sentTail).toBe(tail(kind));
        expect(recs.find((r) => r.sseEventId === "t1")).toMatchObject({ kind: "notification", method: "notifications/message", bytes: Buffer.byteLength(tail(kind)) - "retry: 7000\nid: t1\ndata: ".length });
      } else {
        // No data line, so no message for any reader: passed on as received (a block of field lines, as judged).
        expect(sentTail).toBe(tail(kind));
        expect(recs.filter((r) => r.event === "rpc").map((r) => r.kind)).toEqual(["response"]);
      }
    });
  }
});
