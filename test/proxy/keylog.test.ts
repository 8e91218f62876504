import { readFile, stat } from "node:fs/promises";
import https from "node:https";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import tls from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestProxy, type TestProxy } from "../helpers/proxy-harness.js";
import { testPki } from "../helpers/test-pki.js";

/** The client_random field of NSS key-log lines: one per TLS connection. */
function clientRandoms(text: string): Set<string> {
  return new Set(
    text
      .split("\n")
      .filter((l) => l.length > 0)
      .map((l) => l.split(" ")[1]!),
  );
}

let proxy: TestProxy;
let upstream: https.Server;
let upstreamPort: number;
const upstreamLines: string[] = [];
const keylogFile = path.join(os.tmpdir(), `mcp-wiretap-keylog-${process.pid}.txt`);

beforeAll(async () => {
  const pki = testPki();
  upstream = https.createServer({ cert: pki.serverCertPem, key: pki.serverKeyPem }, (_req, res) => res.end("ok"));
  upstream.on("keylog", (line: Buffer) => upstreamLines.push(line.toString()));
  await new Promise<void>((resolve) => upstream.listen(0, "127.0.0.1", resolve));
  upstreamPort = (upstream.address() as { port: number }).port;
  proxy = await startTestProxy({ keylog: keylogFile });
});
afterAll(async () => {
  await proxy?.stop();
  await new Promise((resolve) => upstream?.close(resolve));
});

describe("--keylog", () => {
  it("writes NSS key-log lines for both TLS legs of an intercepted exchange, in a 0600 file", async () => {
    const clientLines: string[] = [];
    const connect = http.request({ host: proxy.host, port: proxy.port, method: "CONNECT", path: `127.0.0.1:${upstreamPort}` });
    const socket = await new Promise<import("node:net").Socket>((resolve, reject) => {
      connect.once("connect", (_res, s) => resolve(s));
      connect.once("error", reject);
      connect.end();
    });
    const secure = tls.connect({ socket, ca: proxy.caPem, servername: "127.0.0.1" });
    secure.on("keylog", (line: Buffer) => clientLines.push(line.toString()));
    await new Promise<void>((resolve, reject) => secure.once("secureConnect", resolve).once("error", reject));
    secure.write(`GET / HTTP/1.1\r\nHost: 127.0.0.1:${upstreamPort}\r\nConnection: close\r\n\r\n`);
    const reply = await new Promise<string>((resolve) => {
      let text = "";
      secure.on("data", (d: Buffer) => (text += d.toString()));
      secure.on("end", () => resolve(text));
    });
    expect(reply).toMatch(/^HTTP\/1\.1 200/);
    await proxy.waitForRecord((r) => r.event === "http" && r.status === 200);

    const written = await readFile(keylogFile, "utf8");
    for (const line of written.trim().split("\n")) expect(line).toMatch(/^[A-Z_0-9]+ [0-9a-f]{64} [0-9a-f]+$/);
    const inFile = clientRandoms(written);
    // The client leg (client ↔ proxy) and the upstream leg (proxy ↔ server) are two TLS sessions.
    for (const r of clientRandoms(clientLines.join(""))) expect(inFile.has(r)).toBe(true);
    for (const r of clientRandoms(upstreamLines.join(""))) expect(inFile.has(r)).toBe(true);
    expect(inFile.size).toBeGreaterThanOrEqual(2);
    expect((await stat(keylogFile)).mode & 0o777).toBe(0o600);
  });
});
