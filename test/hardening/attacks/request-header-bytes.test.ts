/**
 * Request header bytes past ASCII reach the upstream as the client sent them (node reads them as latin-1, and
 * writes a head as UTF-8 when it goes out with a string or on its own): a GET with no body, a chunked POST,
 * a POST of known length, one with Expect: 100-continue.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readAll, startTestProxy, type TestProxy } from "../../helpers/proxy-harness.js";

for (const mode of ["monitor", "enforce"] as const) describe(`${mode} mode: request header bytes past ASCII reach the upstream as the client sent them`, () => {
  let upstream: net.Server;
  let proxy: TestProxy;
  const received: Buffer[] = [];
  beforeAll(async () => {
    upstream = net.createServer((socket) => {
      let got = Buffer.alloc(0);
      socket.on("data", (c: Buffer) => {
        got = Buffer.concat([got, c]);
        if (got.includes("\r\n\r\n")) {
          received.push(got);
          if (got.includes("100-continue") && !got.includes("ok\r\n")) socket.write("HTTP/1.1 100 Continue\r\n\r\n");
          else socket.end("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
        }
      });
      socket.on("error", () => undefined);
    });
    await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
    const { port } = upstream.address() as net.AddressInfo;
    const config = path.join(mkdtempSync(path.join(os.tmpdir(), "wiretap-rhb-")), "policy.yaml");
    writeFileSync(config, `mode: ${mode}\n`);
    proxy = await startTestProxy({ reverse: [`:0=http://127.0.0.1:${port}`], config });
  });
  afterAll(async () => {
    await proxy?.stop();
    upstream?.close();
  });

  const CALL = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "x", arguments: {} } });
  const note = Buffer.from("X-Note: caf\xe9 \x85\r\n", "latin1");
  const cases: Record<string, Buffer> = {
    "a GET with no body": Buffer.concat([Buffer.from("GET /g HTTP/1.1\r\nHost: a\r\n"), note, Buffer.from("Connection: close\r\n\r\n")]),
    "a chunked POST": Buffer.concat([Buffer.from("POST /c HTTP/1.1\r\nHost: a\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n"), note, Buffer.from("Connection: close\r\n\r\n2\r\nok\r\n0\r\n\r\n")]),
    "a POST of known length": Buffer.concat([Buffer.from("POST /l HTTP/1.1\r\nHost: a\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n"), note, Buffer.from("Connection: close\r\n\r\nok")]),
    // An MCP call (held and judged in enforce mode, then forwarded).
    "an MCP POST": Buffer.concat([Buffer.from(`POST /mcp HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nMcp-Protocol-Version: 2025-06-18\r\nContent-Length: ${CALL.length}\r\n`), note, Buffer.from(`Connection: close\r\n\r\n${CALL}`)]),
  };
  for (const [name, bytes] of Object.entries(cases)) {
    it(`${name}: the header's bytes are E9 and 85, not their UTF-8 re-encoding`, async () => {
      received.length = 0;
      const socket = net.connect(proxy.reversePorts[0]!, "127.0.0.1");
      socket.write(bytes);
      await readAll(socket);
      const raw = Buffer.concat(received);
      const at = raw.indexOf("caf");
      expect(at).toBeGreaterThan(0);
      expect(raw.subarray(at, at + 6).toString("hex")).toBe(Buffer.from("caf\xe9 \x85", "latin1").toString("hex"));
    });
  }
});
