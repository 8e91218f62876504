/**
 * A header value kept in the log that holds a credential in another form than a URL or a bare `name=value`:
 * a debug header quoting the token response as JSON (`X-Debug-Body: {"access_token":"…"}`), a gateway that
 * reports which bearer token it forwarded (`X-Forwarded-Credential-Used: Bearer …` is hidden by name, but
 * `X-Upstream-Request: GET /mcp with Bearer …` is not). The values
 * are issued by the server (no value known to the exchange removes them) and have no shape: they were logged
 * in clear. Every header value kept now also goes through the free-text redaction.
 */
import { readFileSync } from "node:fs";
import { ProxyAgent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestProxy, type TestProxy } from "../../helpers/proxy-harness.js";
import { startScriptedUpstream, type ScriptedUpstream } from "../../helpers/scripted-mcp-upstream.js";

const ISSUED = "oPaQuEaCcEsS7Qm2Lp9x";
const UPSTREAM_BEARER = "uPsTrEaMbEaReR4Kq8Zw";

describe("credentials in the free text of any header kept", () => {
  let up: ScriptedUpstream;
  let proxy: TestProxy;
  let agent: ProxyAgent;
  beforeAll(async () => {
    up = await startScriptedUpstream();
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
    proxy = await startTestProxy();
    agent = new ProxyAgent({ uri: proxy.url, requestTls: { ca: proxy.caPem } });
  });
  afterAll(async () => {
    await agent?.close();
    await proxy?.stop();
    await up?.close();
  });

  it("JSON members and Bearer credentials in a header value are redacted; challenges stay readable", async () => {
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
});
