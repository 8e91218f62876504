/**
 * Bodies, framing, streaming and keep-alive through the intercepting proxy (HTTPS upstream, CONNECT + MITM).
 */
import { ProxyAgent, fetch } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { patternBytes, startHttpsUpstream, type TestUpstream } from "../helpers/https-upstream.js";
import { curl, hasCurl, lastCurlHead, startTestProxy, type TestProxy } from "../helpers/proxy-harness.js";
import { skipNote } from "../helpers/skip-note.js";

/** curl -D - through the proxy, trusting only the proxy's CA: the response head curl received. */
async function curlHead(proxy: TestProxy, url: string): Promise<ReturnType<typeof lastCurlHead>> {
  const { stdout } = await curl(["-sS", "-x", proxy.url, "--cacert", proxy.caCertPath, "-D", "-", "-o", "/dev/null", url]);
  return lastCurlHead(stdout);
}

skipNote(import.meta.url, !hasCurl, "curl is not installed");
describe("streaming through the proxy", () => {
  let proxy: TestProxy;
  let upstream: TestUpstream;
  let agent: ProxyAgent;

  beforeAll(async () => {
    proxy = await startTestProxy();
    upstream = await startHttpsUpstream();
    agent = new ProxyAgent({ uri: proxy.url, requestTls: { ca: proxy.caPem } });
  });

  afterAll(async () => {
    await agent?.close();
    await upstream?.close();
    await proxy?.stop();
  });

  it("carries a ~1 MB request body and its echo byte for byte", async () => {
    const body = patternBytes(1_048_583, 11);
    const res = await fetch(`${upstream.url}/echo`, { method: "POST", body, dispatcher: agent });
    expect(res.status).toBe(200);
    const echoed = Buffer.from(await res.arrayBuffer());
    expect(echoed.length).toBe(body.length);
    expect(echoed.equals(body)).toBe(true);
    const seen = upstream.requests.at(-1);
    expect(seen?.body.equals(body)).toBe(true);
    expect(res.headers.get("x-upstream-saw-host")).toBe(`127.0.0.1:${upstream.port}`);

    const record = await proxy.waitForRecord((r) => r.event === "http" && r.path === "/echo");
    expect(record).toMatchObject({
      mode: "mitm",
      server: `127.0.0.1:${upstream.port}`,
      method: "POST",
      status: 200,
      statusSource: "upstream",
      requestBytes: body.length,
      responseBytes: body.length,
    });
    expect(record.error).toBeUndefined();
    expect(record.tls).toMatchObject({ client: expect.stringMatching(/^TLSv1\.[23]$/), server: expect.stringMatching(/^TLSv1\.[23]$/) });
  });

  it("carries a 5 MB response byte for byte", async () => {
    const n = 5 * 1024 * 1024;
    const res = await fetch(`${upstream.url}/bytes?n=${n}&seed=5`, { dispatcher: agent });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-length")).toBe(String(n));
    const got = Buffer.from(await res.arrayBuffer());
    expect(got.length).toBe(n);
    expect(got.equals(patternBytes(n, 5))).toBe(true);
    const record = await proxy.waitForRecord((r) => r.event === "http" && String(r.path).startsWith("/bytes?n=5242880"));
    expect(record.responseBytes).toBe(n);
  });

  it.skipIf(!hasCurl)("keeps content-length framing as content-length (curl sees the real headers)", async () => {
    const head = await curlHead(proxy, `${upstream.url}/bytes?n=1000`);
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe("1000");
    expect(head.headers.has("transfer-encoding")).toBe(false);
  });

  it.skipIf(!hasCurl)("keeps a chunked response chunked", async () => {
    const head = await curlHead(proxy, `${upstream.url}/chunked?n=1000`);
    expect(head.status).toBe(200);
    expect(head.headers.get("transfer-encoding")).toBe("chunked");
    expect(head.headers.has("content-length")).toBe(false);
  });

  it("delivers SSE events one by one as the upstream writes them", async () => {
    const started = Date.now();
    const res = await fetch(`${upstream.url}/sse?count=6&interval=100`, { dispatcher: agent });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const arrivals: number[] = [];
    let text = "";
    for await (const chunk of res.body ?? []) {
      text += Buffer.from(chunk).toString();
      const complete = text.split("\n\n").length - 1;
      while (arrivals.length < complete) arrivals.push(Date.now());
    }
    const ended = Date.now();
    const events = text.split("\n\n").filter(Boolean);
    expect(events).toHaveLength(6);
    expect(events.map((e) => /^id: (\d+)/.exec(e)?.[1])).toEqual(["1", "2", "3", "4", "5", "6"]);
    expect(arrivals).toHaveLength(6);
    // Spread over time as written (every 100 ms), not delivered in one lump at the end.
    expect(arrivals[5]! - arrivals[0]!).toBeGreaterThanOrEqual(300);
    expect(ended - arrivals[0]!).toBeGreaterThanOrEqual(300);
    expect(arrivals[0]! - started).toBeLessThan(ended - started);
  });

  it("reuses one client connection and one upstream connection for sequential requests", async () => {
    const fresh = await startHttpsUpstream();
    // connections: 1 — undici otherwise may open a second socket while the first is finishing its response.
    const oneAgent = new ProxyAgent({ uri: proxy.url, requestTls: { ca: proxy.caPem }, connections: 1 });
    try {
      for (let i = 0; i < 5; i++) {
        const res = await fetch(`${fresh.url}/bytes?n=2000&seed=${i}`, { dispatcher: oneAgent });
        expect(Buffer.from(await res.arrayBuffer()).equals(patternBytes(2000, i))).toBe(true);
      }
      expect(fresh.requests).toHaveLength(5);
      expect(fresh.connections).toBe(1);
      const records = await proxy.waitForRecords((r) => r.event === "http" && r.server === `127.0.0.1:${fresh.port}`, 5);
      // One CONNECT tunnel: every exchange came from the same client socket.
      expect(new Set(records.map((r) => r.client)).size).toBe(1);
    } finally {
      await oneAgent.close();
      await fresh.close();
    }
  });
});
