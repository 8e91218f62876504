/**
 * An authorization endpoint that hands the code back through a URL in a header other than `Location`:
 * `Refresh: 0; url=…?code=…`, `Link: <…?code=…>; rel=…`, a debug header. Only `Location`, `Content-Location`
 * and `Referer` had their query redacted: the code of those was logged in clear (it is issued by the server,
 * so no value known beforehand can remove it). Every URL in every header value kept is now redacted.
 */
import { readFileSync } from "node:fs";
import { ProxyAgent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestProxy, type TestProxy } from "../../helpers/proxy-harness.js";
import { startScriptedUpstream, type ScriptedUpstream } from "../../helpers/scripted-mcp-upstream.js";

const CODE = "SplxlOBeZQQYbYS6WxSbIA";
const TOKEN = "iNsTaNtAcCeSs7Qm2Lp";
const CALLBACK = "http://127.0.0.1:33418/callback";

describe("URLs in any response header", () => {
  let up: ScriptedUpstream;
  let proxy: TestProxy;
  let agent: ProxyAgent;
  beforeAll(async () => {
    up = await startScriptedUpstream();
    up.route("GET", "/authorize", (_req, res) => {
      res.writeHead(200, {
        "content-type": "text/html",
        "content-length": "0",
        refresh: `0; url=${CALLBACK}?code=${CODE}&state=xyz`,
        link: `<${CALLBACK}?code=${CODE}&state=xyz>; rel="alternate", <${CALLBACK}#access_token=${TOKEN}&token_type=Bearer>; rel="implicit"`,
        "x-redirect-to": `${CALLBACK}?state=xyz&code=${CODE}`,
      });
      res.end();
    });
    proxy = await startTestProxy();
    agent = new ProxyAgent({ uri: proxy.url, requestTls: { ca: proxy.caPem } });
  });
  afterAll(async () => {
    await agent?.close();
    await proxy?.stop();
    await up?.close();
  });

  it("Refresh, Link and any other header quoting a URL have its secret parameters redacted", async () => {
    const res = await request(`${up.url}/authorize?response_type=code&client_id=c-1&state=xyz`, { dispatcher: agent });
    await res.body.dump();
    expect(res.headers.refresh).toContain(CODE); // the client gets them as sent
    const http = await proxy.waitForRecord((r) => r.event === "http" && String(r.path).startsWith("/authorize"), { what: "http record" });
    const headers = http.responseHeaders as Record<string, string>;
    expect(headers.refresh).toBe(`0; url=${CALLBACK}?code=[redacted]&state=xyz`);
    expect(headers.link).toBe(`<${CALLBACK}?code=[redacted]&state=xyz>; rel="alternate", <${CALLBACK}#access_token=[redacted]&token_type=Bearer>; rel="implicit"`);
    expect(headers["x-redirect-to"]).toBe(`${CALLBACK}?state=xyz&code=[redacted]`);
    const log = readFileSync(proxy.logFile, "utf8");
    expect(log).not.toContain(CODE);
    expect(log).not.toContain(TOKEN);
  });
});
