/**
 * A URL that carries another URL in a parameter: a login broker that redirects with
 * `?return_to=%2Fcallback%3Fcode%3D…` (the code percent-encoded inside an ordinary parameter, or encoded twice),
 * or a second `?` (`/cb?x=1?code=…`, which servers that split on the last `?` read as `code`). Only the names
 * of the outer query were read: the code was logged in clear. A parameter whose value, decoded, is itself a
 * query or URL with a credential in it is now hidden whole.
 */
import { readFileSync } from "node:fs";
import { ProxyAgent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redactUrlQuery } from "../../../src/log/redact.js";
import { startTestProxy, type TestProxy } from "../../helpers/proxy-harness.js";
import { startScriptedUpstream, type ScriptedUpstream } from "../../helpers/scripted-mcp-upstream.js";

const CODE = "NeStEdCoDe7Qm2Lp9xK4";
const CALLBACK = "http://127.0.0.1:33418/callback";

describe("credentials in a URL inside a URL", () => {
  let up: ScriptedUpstream;
  let proxy: TestProxy;
  let agent: ProxyAgent;
  beforeAll(async () => {
    up = await startScriptedUpstream();
    up.route("GET", "/authorize", (_req, res) => {
      res.writeHead(302, {
        "content-length": "0",
        location: `https://broker.example/continue?step=2&return_to=${encodeURIComponent(`${CALLBACK}?code=${CODE}&state=xyz`)}`,
        link: `<https://broker.example/next?to=${encodeURIComponent(encodeURIComponent(`${CALLBACK}?code=${CODE}`))}>; rel="next"`,
        refresh: `0; url=${CALLBACK}?state=xyz?code=${CODE}`,
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

  it("percent-encoded once or twice, or after a second `?`: hidden in every header and the path", async () => {
    const res = await request(`${up.url}/authorize?client_id=c-1&next=${encodeURIComponent(`/cb?code=${CODE}`)}`, { dispatcher: agent });
    await res.body.dump();
    expect(String(res.headers.location)).toContain(CODE.slice(0, 8));
    const http = await proxy.waitForRecord((r) => r.event === "http" && String(r.path).startsWith("/authorize"), { what: "http record" });
    const headers = http.responseHeaders as Record<string, string>;
    expect(headers.location).toBe("https://broker.example/continue?step=2&return_to=[redacted]");
    expect(http.path).toBe("/authorize?client_id=c-1&next=[redacted]");
    expect(readFileSync(proxy.logFile, "utf8")).not.toContain(CODE);
  });

  it("ordinary values stay readable", () => {
    expect(redactUrlQuery("/cb?redirect_uri=http%3A%2F%2Flocalhost%2Fcb&state=abc%3D%3D&x=a%3Db")).toBe("/cb?redirect_uri=http%3A%2F%2Flocalhost%2Fcb&state=abc%3D%3D&x=a%3Db");
  });
});
