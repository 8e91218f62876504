/**
 * An upstream certificate the proxy does not trust: the 502 and its record say what to do with
 * mcp-wiretap (`--upstream-ca FILE` for a private CA, `--insecure-upstream` as the last resort), never
 * Node's own advice to restart Node with `--use-system-ca`.
 */
import { ProxyAgent, fetch } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHttpsUpstream, type TestUpstream } from "../helpers/https-upstream.js";
import { startTestProxy, type TestProxy } from "../helpers/proxy-harness.js";
import { expiredServerCert, selfSignedServerCert, testPki } from "../helpers/test-pki.js";

describe("the hint for an untrusted upstream certificate", () => {
  let proxy: TestProxy;
  let agent: ProxyAgent;
  const upstreams: TestUpstream[] = [];

  beforeAll(async () => {
    proxy = await startTestProxy({ upstreamCa: [] }); // the test PKI's CA is not trusted
    agent = new ProxyAgent({ uri: proxy.url, requestTls: { ca: proxy.caPem } });
  });

  afterAll(async () => {
    await agent?.close();
    await Promise.all(upstreams.map((u) => u.close()));
    await proxy?.stop();
  });

  it.each([
    ["signed by a private CA", () => ({ certPem: testPki().serverCertPem, keyPem: testPki().serverKeyPem }), "UNABLE_TO_VERIFY_LEAF_SIGNATURE"],
    ["self-signed", selfSignedServerCert, "DEPTH_ZERO_SELF_SIGNED_CERT"],
  ])("%s: names --upstream-ca and --insecure-upstream, not --use-system-ca", async (_label, variant, code) => {
    const { certPem, keyPem } = variant();
    const u = await startHttpsUpstream({ cert: certPem, key: keyPem });
    upstreams.push(u);
    const res = await fetch(`${u.url}/bytes?n=1`, { dispatcher: agent });
    expect(res.status).toBe(502);
    const text = await res.text();
    const record = await proxy.waitForRecord((r) => r.event === "http" && r.server === `127.0.0.1:${u.port}`);
    const message = (record.error as { message: string; tlsError: string }).message;
    expect((record.error as { tlsError: string }).tlsError).toBe(code);
    for (const said of [text, message]) {
      expect(said).not.toContain("--use-system-ca");
      expect(said).not.toMatch(/running Node\.js with/);
      expect(said).toContain("--upstream-ca");
      expect(said).toContain("--insecure-upstream");
      expect(said).toContain(code);
    }
    expect(text).toMatch(/^mcp-wiretap: [^\n]+\n$/);
  });

  it("an expired certificate gets no trust advice", async () => {
    const { certPem, keyPem } = expiredServerCert();
    const u = await startHttpsUpstream({ cert: certPem, key: keyPem });
    upstreams.push(u);
    const res = await fetch(`${u.url}/bytes?n=1`, { dispatcher: agent });
    const text = await res.text();
    expect(res.status).toBe(502);
    expect(text).toContain("CERT_HAS_EXPIRED");
    expect(text).not.toContain("--use-system-ca");
  });
});
