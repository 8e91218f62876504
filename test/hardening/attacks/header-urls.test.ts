/**
 * An authorization endpoint that hands the code back through a URL in a header other than `Location`:
 * `Refresh: 0; url=…?code=…`, `Link: <…?code=…>; rel=…`, a debug header. Only `Location`, `Content-Location`
 * and `Referer` had their query redacted: the code of those was logged in clear (it is issued by the server,
 * so no value known beforehand can remove it). Every URL in every header value kept is now redacted.
 *
 * The same holds for a header value that quotes a token response as JSON (`X-Debug-Body: {"access_token":…}`)
 * or a bearer token in free text (`X-Upstream-Request: GET /mcp with Bearer …`): every header value kept also
 * goes through the free-text redaction. And for a URL inside a URL: a broker that redirects with
 * `?return_to=%2Fcallback%3Fcode%3D…` (encoded once or twice) or a second `?` (`/cb?x=1?code=…`, which servers
 * splitting on the last `?` read as `code`): a parameter whose value, decoded, is a query or URL with a
 * credential in it is hidden whole.
 */
import { readFileSync } from "node:fs";
import { ProxyAgent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redactUrlQuery } from "../../../src/log/redact.js";
import { startTestProxy, type TestProxy } from "../../helpers/proxy-harness.js";
import { startScriptedUpstream, type ScriptedUpstream } from "../../helpers/scripted-mcp-upstream.js";

const CODE = "SplxlOBeZQQYbYS6WxSbIA";
const TOKEN = "iNsTaNtAcCeSs7Qm2Lp";
const CALLBACK = "http://127.0.0.1:33418/callback";
const ISSUED = "oPaQuEaCcEsS7Qm2Lp9x";
const UPSTREAM_BEARER = "uPsTrEaMbEaReR4Kq8Zw";
const NESTED_CODE = "NeStEdCoDe7Qm2Lp9xK4";

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

  it("JSON members and Bearer credentials in a header value are redacted; challenges stay readable", async () => {
    up.route("GET", "/debug", (_req, res) => {
      res.writeHead(200, {
        "content-type": "text/plain",
        "content-length": "0",
        "x-debug-body": JSON.stringify({ access_token: ISSUED, token_type: "Bearer", expires_in: 3600 }),
        "x-upstream-request": `GET /mcp with Bearer ${UPSTREAM_BEARER}`,
        "www-authenticate": 'Bearer realm="mcp", error="invalid_token", resource_metadata="https://as.example/.well-known/oauth-protected-resource"',
      });
      res.end();
    });
    const res = await request(`${up.url}/debug`, { dispatcher: agent });
    await res.body.dump();
    expect(String(res.headers["x-debug-body"])).toContain(ISSUED); // the client gets it as sent
    const http = await proxy.waitForRecord((r) => r.event === "http" && r.path === "/debug", { what: "http record" });
    const headers = http.responseHeaders as Record<string, string>;
    expect(headers["x-debug-body"]).toBe('{"access_token":"[redacted]","token_type":"Bearer","expires_in":3600}');
    expect(headers["x-upstream-request"]).toBe("GET /mcp with Bearer [redacted]");
    expect(headers["www-authenticate"]).toBe('Bearer realm="mcp", error="invalid_token", resource_metadata="https://as.example/.well-known/oauth-protected-resource"');
    const log = readFileSync(proxy.logFile, "utf8");
    expect(log).not.toContain(ISSUED);
    expect(log).not.toContain(UPSTREAM_BEARER);
  });

  it("a URL inside a URL, percent-encoded once or twice or after a second `?`: hidden in every header and the path", async () => {
    up.route("GET", "/broker", (_req, res) => {
      res.writeHead(302, {
        "content-length": "0",
        location: `https://broker.example/continue?step=2&return_to=${encodeURIComponent(`${CALLBACK}?code=${NESTED_CODE}&state=xyz`)}`,
        link: `<https://broker.example/next?to=${encodeURIComponent(encodeURIComponent(`${CALLBACK}?code=${NESTED_CODE}`))}>; rel="next"`,
        refresh: `0; url=${CALLBACK}?state=xyz?code=${NESTED_CODE}`,
      });
      res.end();
    });
    const res = await request(`${up.url}/broker?client_id=c-1&next=${encodeURIComponent(`/cb?code=${NESTED_CODE}`)}`, { dispatcher: agent });
    await res.body.dump();
    expect(String(res.headers.location)).toContain(NESTED_CODE.slice(0, 8));
    const http = await proxy.waitForRecord((r) => r.event === "http" && String(r.path).startsWith("/broker"), { what: "http record" });
    expect((http.responseHeaders as Record<string, string>).location).toBe("https://broker.example/continue?step=2&return_to=[redacted]");
    expect(http.path).toBe("/broker?client_id=c-1&next=[redacted]");
    expect(readFileSync(proxy.logFile, "utf8")).not.toContain(NESTED_CODE);
    // Ordinary encoded values stay readable.
    const plain = "/cb?redirect_uri=http%3A%2F%2Flocalhost%2Fcb&state=abc%3D%3D&x=a%3Db";
    expect(redactUrlQuery(plain)).toBe(plain);
  });
});
