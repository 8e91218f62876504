/**
 * Header bytes past ASCII in a response whose head goes out before its body (an event stream, a chunked body).
 * node's flushHeaders() writes the head as UTF-8: the byte 0x85 the upstream sent (and the proxy read and
 * recorded as latin-1) reached the client as C2 85, and 0xE9 as C3 A9. The client then read another header
 * than the one judged (httpx decodes the head as UTF-8 when it is valid UTF-8: NEL before `charset` named a
 * charset the proxy never saw). Monitor and enforce mode alike: the head goes out as it came.
 */
import http from "node:http";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseRawResponse, readAll, startTestProxy, type TestProxy } from "../../helpers/proxy-harness.js";

describe("response header bytes past ASCII reach the client as the upstream sent them", () => {
  let upstream: http.Server;
  let proxy: TestProxy;
  beforeAll(async () => {
    upstream = http.createServer((req, res) => {
      // A chunked body (no content-length): its head is sent before the body.
      if (req.url === "/length" || req.url === "/empty") {
        // A body of known length (or none): the head goes out with it.
        const body = req.url === "/length" ? "ok" : "";
        res.writeHead(200, { "content-type": "text/plain", "content-length": String(body.length), "x-note": "caf\xe9 \x85" });
        // A Buffer: node writes the head as latin-1 with it (with a string body, as UTF-8).
        res.end(Buffer.from(body));
        return;
      }
      res.writeHead(200, { "content-type": req.url === "/sse" ? "text/event-stream" : "text/plain", "x-note": "caf\xe9 \x85" });
      setTimeout(() => res.end(req.url === "/sse" ? ": ping\n\n" : "ok"), 20);
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    const { port } = upstream.address() as net.AddressInfo;
    proxy = await startTestProxy({ reverse: [`:0=http://127.0.0.1:${port}`] });
  });
  afterAll(async () => {
    await proxy?.stop();
    upstream?.close();
  });

  for (const path of ["/sse", "/chunked", "/length", "/empty"]) {
    it(`${path}: the header's bytes are E9 and 85, not their UTF-8 re-encoding`, async () => {
      const socket = net.connect(proxy.reversePorts[0]!, "127.0.0.1");
      socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
      const raw = await readAll(socket);
      const res = parseRawResponse(raw);
      expect(res.status).toBe(200);
      const at = raw.indexOf("caf");
      expect(raw.subarray(at, at + 6).toString("hex")).toBe(Buffer.from("caf\xe9 \x85", "latin1").toString("hex"));
    });
  }
});
