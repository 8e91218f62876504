/**
 * What a client may name as a destination: hostile CONNECT targets are refused (400, on the record) without
 * touching the disk or the network; IPv6 literals work; a Host header naming another host inside a tunnel
 * is refused (421) before anything reaches the upstream.
 */
import { readdir } from "node:fs/promises";
import { networkInterfaces } from "node:os";
import { ProxyAgent, fetch } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { patternBytes, startHttpsUpstream, type TestUpstream } from "../helpers/https-upstream.js";
import {
  openTunnel,
  rawProxyExchange,
  rawRequest,
  parseRawResponse,
  startTestProxy,
  tlsThroughTunnel,
  type LogRecord,
  type TestProxy,
} from "../helpers/proxy-harness.js";
import { skipNote } from "../helpers/skip-note.js";

const hasIpv6Loopback = Object.values(networkInterfaces()).some((list) =>
  list?.some((entry) => entry.internal && entry.family === "IPv6" && entry.address === "::1"),
);

const HOSTILE_TARGETS: [label: string, target: string][] = [
  ["a path traversal", "../../x:443"],
  ["a NUL byte", "evil\0.example:443"],
  ["a 1,000-character name", `${"a".repeat(1000)}:443`],
  ["port 0", "127.0.0.1:0"],
  ["port 70000", "127.0.0.1:70000"],
  ["no port", "example.com"],
  ["an IPv6 literal without port", "[::1]"],
  ["a bad IPv6 literal", "[::zz]:443"],
  ["a percent-encoded name", "%2e%2e%2fx:443"],
];

skipNote(import.meta.url, !hasIpv6Loopback, "no IPv6 loopback (::1) on this machine");
describe("CONNECT targets", () => {
  let proxy: TestProxy;
  let upstream: TestUpstream;
  let caFilesBefore: string[];

  beforeAll(async () => {
    proxy = await startTestProxy();
    upstream = await startHttpsUpstream();
    caFilesBefore = (await readdir(proxy.caDir)).sort();
  });

  afterAll(async () => {
    await upstream?.close();
    await proxy?.stop();
  });

  it.each(HOSTILE_TARGETS)("refuses %s with 400 and a refused record", async (_label, target) => {
    const before = (await proxy.records()).filter((r) => r.event === "refused").length;
    const answer = parseRawResponse(await rawProxyExchange(proxy, `CONNECT ${target} HTTP/1.1\r\nHost: x\r\n\r\n`));
    expect(answer.status).toBe(400);
    expect(answer.headers.connection).toBe("close");
    const refused = await proxy.waitForRecords((r) => r.event === "refused", before + 1);
    const record = refused.at(-1)!;
    expect(record).toMatchObject({ level: "warn", stage: "connect", status: 400 });
    expect(typeof record.reason).toBe("string");
    // The record carries the target escaped and capped, never raw control characters or 1,000 characters.
    const logged = String(record.target);
    expect(logged).not.toMatch(/[\0-\x1f]/);
    expect(logged.length).toBeLessThanOrEqual(310);
  });

  it("still serves after the hostile targets, and created no file for them", async () => {
    const agent = new ProxyAgent({ uri: proxy.url, requestTls: { ca: proxy.caPem } });
    try {
      const res = await fetch(`${upstream.url}/bytes?n=4096&seed=3`, { dispatcher: agent });
      expect(res.status).toBe(200);
      expect(Buffer.from(await res.arrayBuffer()).equals(patternBytes(4096, 3))).toBe(true);
    } finally {
      await agent.close();
    }
    expect((await readdir(proxy.caDir)).sort()).toEqual(caFilesBefore);
    expect(upstream.requests.every((r) => r.url === "/bytes?n=4096&seed=3")).toBe(true);
  });

  it("refuses a Host header that names another host inside the tunnel (421), before the upstream sees it", async () => {
    const seenBefore = upstream.requests.length;
    const { status, socket } = await openTunnel(proxy, `127.0.0.1:${upstream.port}`);
    expect(status).toBe(200);
    const secure = await tlsThroughTunnel(socket, "127.0.0.1", proxy.caPem);
    const res = await rawRequest(secure, "GET /bytes?n=10 HTTP/1.1\r\nHost: metadata.internal\r\nConnection: close\r\n\r\n");
    expect(res.status).toBe(421);
    expect(res.body.toString()).toMatch(/^mcp-wiretap: [^\n]*metadata\.internal[^\n]*\n$/);
    const record = await proxy.waitForRecord(
      (r: LogRecord) => r.event === "refused" && r.stage === "request" && r.status === 421,
    );
    expect(record).toMatchObject({ server: `127.0.0.1:${upstream.port}`, host: "metadata.internal", method: "GET" });
    expect(upstream.requests.length).toBe(seenBefore);
  });

  it("accepts a Host header that names the CONNECT target", async () => {
    const { socket } = await openTunnel(proxy, `127.0.0.1:${upstream.port}`);
    const secure = await tlsThroughTunnel(socket, "127.0.0.1", proxy.caPem);
    const res = await rawRequest(secure, `GET /bytes?n=10 HTTP/1.1\r\nHost: 127.0.0.1:${upstream.port}\r\nConnection: close\r\n\r\n`);
    expect(res.status).toBe(200);
  });

  describe.skipIf(!hasIpv6Loopback)("IPv6", () => {
    let v6: TestUpstream;

    beforeAll(async () => {
      v6 = await startHttpsUpstream({ host: "::1" });
    });

    afterAll(async () => {
      await v6?.close();
    });

    it("tunnels CONNECT [::1]:port end to end", async () => {
      const { status, socket } = await openTunnel(proxy, `[::1]:${v6.port}`);
      expect(status).toBe(200);
      const secure = await tlsThroughTunnel(socket, "::1", proxy.caPem);
      expect(secure.getPeerX509Certificate()?.subjectAltName).toContain("IP Address:0:0:0:0:0:0:0:1");
      const res = await rawRequest(secure, `GET /bytes?n=1000&seed=9 HTTP/1.1\r\nHost: [::1]:${v6.port}\r\nConnection: close\r\n\r\n`);
      expect(res.status).toBe(200);
      expect(res.body.equals(patternBytes(1000, 9))).toBe(true);

      const agent = new ProxyAgent({ uri: proxy.url, requestTls: { ca: proxy.caPem } });
      try {
        const echoed = await fetch(`${v6.url}/echo`, { method: "POST", body: "over six", dispatcher: agent });
        expect(await echoed.text()).toBe("over six");
        expect(echoed.headers.get("x-upstream-saw-host")).toBe(`[::1]:${v6.port}`);
      } finally {
        await agent.close();
      }
      const records = await proxy.waitForRecords((r) => r.event === "http" && r.server === `[::1]:${v6.port}`, 2);
      expect(records.map((r) => r.status)).toEqual([200, 200]);
      expect((await readdir(proxy.caDir)).sort()).toEqual(caFilesBefore);
    });
  });
});
