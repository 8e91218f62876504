/**
 * TLS on both legs: the certificate the client sees, upstream certificate failures, --insecure-upstream,
 * unreachable upstreams, and the CA's files on disk.
 */
import { X509Certificate } from "node:crypto";
import { stat } from "node:fs/promises";
import path from "node:path";
import { ProxyAgent, fetch } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHttpsUpstream, type TestUpstream } from "../helpers/https-upstream.js";
import {
  closedPort,
  curl,
  hasCurl,
  openTunnel,
  rawRequest,
  startTestProxy,
  tlsThroughTunnel,
  type TestProxy,
} from "../helpers/proxy-harness.js";
import { expiredServerCert, selfSignedServerCert, testPki, writeTempFile, wrongNameServerCert } from "../helpers/test-pki.js";
import { expectRecordsMatchSchemas } from "../records/expect-records.js";
import { skipNote } from "../helpers/skip-note.js";

skipNote(import.meta.url, !hasCurl, "curl is not installed");
describe("TLS through the proxy", () => {
  let proxy: TestProxy;
  let agent: ProxyAgent;
  const upstreams: TestUpstream[] = [];

  beforeAll(async () => {
    proxy = await startTestProxy();
    agent = new ProxyAgent({ uri: proxy.url, requestTls: { ca: proxy.caPem } });
  });

  afterAll(async () => {
    await agent?.close();
    await Promise.all(upstreams.map((u) => u.close()));
    await proxy?.stop();
  });

  async function upstream(opts: Parameters<typeof startHttpsUpstream>[0] = {}): Promise<TestUpstream> {
    const u = await startHttpsUpstream(opts);
    upstreams.push(u);
    return u;
  }

  it("creates the CA with the key 0600 and the folder 0700", async () => {
    const dir = await stat(proxy.caDir);
    expect(dir.mode & 0o777).toBe(0o700);
    const cert = await stat(proxy.caCertPath);
    expect(cert.isFile()).toBe(true);
    const key = await stat(path.join(proxy.caDir, "ca-key.pem"));
    expect(key.mode & 0o777).toBe(0o600);
    expect(proxy.banner).toContain(proxy.caCertPath);
    expect(proxy.banner).toContain(proxy.url);
  });

  it("shows the client a certificate for the target, issued by the proxy's CA", async () => {
    const u = await upstream();
    const { status, socket } = await openTunnel(proxy, `127.0.0.1:${u.port}`);
    expect(status).toBe(200);
    const secure = await tlsThroughTunnel(socket, "127.0.0.1", proxy.caPem);
    try {
      expect(secure.authorized).toBe(true);
      const leaf = secure.getPeerX509Certificate()!;
      const ca = new X509Certificate(proxy.caPem);
      expect(leaf.checkIssued(ca)).toBe(true);
      expect(leaf.verify(ca.publicKey)).toBe(true);
      expect(leaf.subjectAltName).toContain("IP Address:127.0.0.1");
      expect(leaf.fingerprint256).not.toBe(new X509Certificate(testPki().serverCertPem).fingerprint256);
      const res = await rawRequest(secure, `GET /bytes?n=10 HTTP/1.1\r\nHost: 127.0.0.1:${u.port}\r\nConnection: close\r\n\r\n`);
      expect(res.status).toBe(200);
      expect(res.body.length).toBe(10);
    } finally {
      secure.destroy();
    }
  });

  // curl (OpenSSL) checks the certificate during the handshake and sends an alert, which the proxy sees.
  // (A Node client checks it after the handshake and just closes: see the report — nothing is logged then.)
  it.skipIf(!hasCurl)("reports a client that does not trust the proxy's CA", async () => {
    const u = await upstream();
    const caFile = writeTempFile(testPki().caPem, "only-the-upstream-ca.pem");
    const result = await curl(["-sS", "-x", proxy.url, "--cacert", caFile, "-o", "/dev/null", `${u.url}/bytes?n=10`]);
    expect(result.code).not.toBe(0);
    const record = await proxy.waitForRecord((r) => r.event === "client_tls_error" && r.server === `127.0.0.1:${u.port}`);
    expect(String(record.hint)).toContain("ca path");
    expect(String(record.err)).toMatch(/unknown ca|certificate/i);
    expectRecordsMatchSchemas([record], "client_tls_error");
    expect(u.requests).toHaveLength(0);
  });

  it.each([
    ["expired", expiredServerCert, "CERT_HAS_EXPIRED"],
    ["wrong-name", wrongNameServerCert, "ERR_TLS_CERT_ALTNAME_INVALID"],
    ["self-signed", selfSignedServerCert, "DEPTH_ZERO_SELF_SIGNED_CERT"],
  ])("answers 502 with one line of text for an upstream with a %s certificate", async (_label, variant, tlsError) => {
    const { certPem, keyPem } = variant();
    const u = await upstream({ cert: certPem, key: keyPem });
    const res = await fetch(`${u.url}/bytes?n=10`, { dispatcher: agent });
    expect(res.status).toBe(502);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(text).toMatch(/^mcp-wiretap: [^\n]+\n$/);
    expect(text).toContain(`127.0.0.1:${u.port}`);
    expect(text).toContain(tlsError);
    expect(u.requests).toHaveLength(0);

    const record = await proxy.waitForRecord((r) => r.event === "http" && r.server === `127.0.0.1:${u.port}`);
    expect(record).toMatchObject({
      level: "warn",
      status: 502,
      statusSource: "proxy",
      error: { code: "upstream_tls", tlsError },
    });
    expect((record.error as { message: string }).message).toContain(`127.0.0.1:${u.port}`);
    expect(record.insecureUpstream).toBeUndefined();
  });

  it("answers 502 and logs upstream_connect when nothing listens on the target port", async () => {
    const port = await closedPort();
    const res = await fetch(`https://127.0.0.1:${port}/anything`, { dispatcher: agent });
    expect(res.status).toBe(502);
    const text = await res.text();
    expect(text).toBe(`mcp-wiretap: 127.0.0.1:${port}: connection refused\n`);
    const record = await proxy.waitForRecord((r) => r.event === "http" && r.server === `127.0.0.1:${port}`);
    expect(record).toMatchObject({ status: 502, statusSource: "proxy", error: { code: "upstream_connect" } });
  });

  describe("with insecureUpstream", () => {
    let insecure: TestProxy;
    let insecureAgent: ProxyAgent;

    beforeAll(async () => {
      insecure = await startTestProxy({ insecureUpstream: true, upstreamCa: [] });
      insecureAgent = new ProxyAgent({ uri: insecure.url, requestTls: { ca: insecure.caPem } });
    });

    afterAll(async () => {
      await insecureAgent?.close();
      await insecure?.stop();
    });

    it("reaches a self-signed upstream and says so in the record", async () => {
      const { certPem, keyPem } = selfSignedServerCert();
      const u = await upstream({ cert: certPem, key: keyPem });
      const res = await fetch(`${u.url}/bytes?n=100`, { dispatcher: insecureAgent });
      expect(res.status).toBe(200);
      expect((await res.arrayBuffer()).byteLength).toBe(100);
      const record = await insecure.waitForRecord((r) => r.event === "http" && r.server === `127.0.0.1:${u.port}`);
      expect(record).toMatchObject({ status: 200, insecureUpstream: true });
      expect(record.error).toBeUndefined();
      const warning = await insecure.waitForRecord((r) => r.event === "insecure_upstream");
      expect(warning.level).toBe("warn");
      expectRecordsMatchSchemas(await insecure.records(), "insecure_upstream", "start", "http");
      expect(insecure.banner).toMatch(/not verified/);
    });
  });
});
