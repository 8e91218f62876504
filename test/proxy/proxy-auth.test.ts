import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHttpsUpstream, type TestUpstream } from "../helpers/https-upstream.js";
import { rawProxyExchange, startTestProxy, type TestProxy } from "../helpers/proxy-harness.js";
import { expectRecordsMatchSchemas } from "../records/expect-records.js";

let upstream: TestUpstream;
let proxy: TestProxy;
const basic = (credentials: string): string => `Basic ${Buffer.from(credentials).toString("base64")}`;

beforeAll(async () => {
  upstream = await startHttpsUpstream();
  // Beyond loopback (all interfaces), so credentials are required; the tests connect over 127.0.0.1.
  proxy = await startTestProxy({ host: "0.0.0.0", proxyAuth: "wiretap:s3cret-pass" });
});
afterAll(async () => {
  await proxy?.stop();
  await upstream?.close();
});

describe("--proxy-auth", () => {
  const target = () => `127.0.0.1:${upstream.port}`;
  const connect = (auth?: string) =>
    rawProxyExchange({ host: "127.0.0.1", port: proxy.port }, `CONNECT ${target()} HTTP/1.1\r\nHost: ${target()}\r\n${auth ? `Proxy-Authorization: ${auth}\r\n` : ""}\r\n`);

  it("refuses a CONNECT without credentials or with wrong ones (407 with a Basic challenge)", async () => {
    for (const auth of [undefined, basic("wiretap:wrong"), basic("wiretap"), "Bearer s3cret-pass"]) {
      const answer = (await connect(auth)).toString("latin1");
      expect(answer).toMatch(/^HTTP\/1\.1 407 /);
      expect(answer).toMatch(/proxy-authenticate: Basic realm="mcp-wiretap"/i);
    }
  });

  it("lets the right credentials through", async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request({
        host: "127.0.0.1",
        port: proxy.port,
        method: "CONNECT",
        path: target(),
        headers: { host: target(), "proxy-authorization": basic("wiretap:s3cret-pass") },
      });
      req.once("connect", (res, socket) => {
        socket.destroy();
        resolve(res.statusCode ?? 0);
      });
      req.once("error", reject);
      req.end();
    });
    expect(status).toBe(200);
  });

  it("guards absolute-URI requests too, but not the health check", async () => {
    const plain = (auth?: string) =>
      rawProxyExchange(
        { host: "127.0.0.1", port: proxy.port },
        `GET http://${target()}/ HTTP/1.1\r\nHost: ${target()}\r\nConnection: close\r\n${auth ? `Proxy-Authorization: ${auth}\r\n` : ""}\r\n`,
      );
    expect((await plain()).toString("latin1")).toMatch(/^HTTP\/1\.1 407 /);
    const health = await fetch(`http://127.0.0.1:${proxy.port}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: "ok" });
  });

  it("records refusals without the credentials", async () => {
    const refusals = await proxy.waitForRecords((r) => r.event === "refused" && r.status === 407, 4);
    expect(refusals.map((r) => r.reason)).toContain("wrong proxy credentials");
    expectRecordsMatchSchemas(await proxy.records(), "start", "refused");
    const log = JSON.stringify(await proxy.records());
    expect(log).not.toContain("s3cret-pass");
    expect(log).not.toContain(Buffer.from("wiretap:wrong").toString("base64"));
  });
});
