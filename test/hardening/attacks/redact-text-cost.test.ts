/**
 * Free text from an OAuth body (a token request's `grant_type` or `scope`, a token endpoint's
 * `error_description`) goes through the text redaction before it is cut for the `auth` record. Two of its
 * patterns restarted at every word boundary and scanned to the end of the run each time: 60 kB of `a-a-a-…`
 * (or `eyJ-eyJ-…`) in one form body held the event loop for seconds, from any client to any host. They now
 * start only where a run of name (or token) characters starts: linear.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redactText } from "../../../src/log/redact.js";
import { startTestProxy, type TestProxy } from "../../helpers/proxy-harness.js";
import { startScriptedUpstream, type ScriptedUpstream } from "../../helpers/scripted-mcp-upstream.js";
import { wireClient, type WireClient } from "../../policy/wire-client.js";

const CHARS = 60_000;

describe("text redaction cost on what a peer chooses", () => {
  let up: ScriptedUpstream;
  let proxy: TestProxy;
  let client: WireClient;
  beforeAll(async () => {
    up = await startScriptedUpstream();
    up.route("POST", "/token", (_req, res) => {
      res.writeHead(400, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: "invalid_grant" }));
    });
    proxy = await startTestProxy();
    client = wireClient(proxy);
  });
  afterAll(async () => {
    await client?.close();
    await proxy?.stop();
    await up?.close();
  });

  const timed = async (n: number, filler: string): Promise<number> => {
    const started = performance.now();
    const body = `grant_type=${filler.repeat(CHARS / filler.length)}`;
    const res = await client.post(`${up.url}/token?n=${n}`, body, { "content-type": "application/x-www-form-urlencoded" });
    expect(res.status).toBe(400);
    await proxy.waitForRecord((r) => r.event === "auth" && r.path === `/token?n=${n}`, { timeoutMs: 60_000 });
    return performance.now() - started;
  };

  it("a form of `a-a-a-…` or `eyJ-eyJ-…` costs about what a form of `aaaa…` costs", async () => {
    const plain = await timed(1, "aa");
    const dashed = await timed(2, "a-");
    expect(dashed, `plain ${plain.toFixed(0)} ms`).toBeLessThan(4 * plain + 1_500);
    const tokens = await timed(3, "eyJ-");
    expect(tokens, `plain ${plain.toFixed(0)} ms`).toBeLessThan(4 * plain + 1_500);
  }, 90_000);

  it("still hides what it hid", () => {
    expect(redactText("see x-token=SECRET1 and 9-api_key=SECRET2 and Bearer abcdef123456")).toBe(
      "see x-token=[redacted] and 9-api_key=[redacted] and Bearer [redacted]",
    );
    expect(redactText("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl end")).toBe("jwt [redacted] end");
    expect(redactText("a-b-c-token=SECRET3")).toBe("a-b-c-token=[redacted]");
  });
});
