/**
 * Free text copied into `auth` records (an OAuth `error_description`, …) was cut at 512 characters before the
 * exchange's credentials were removed from it by value (and before the record guard masks secrets by shape):
 * a server that quotes the refresh token it was sent, where the cut falls inside the token, left most of
 * the token in the record, which no longer matched the value to remove.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestProxy, type TestProxy } from "../../helpers/proxy-harness.js";
import { startScriptedUpstream, type ScriptedUpstream } from "../../helpers/scripted-mcp-upstream.js";
import { wireClient, type WireClient } from "../../policy/wire-client.js";

/** Opaque: no shape to recognise it by, only its value. */
const REFRESH_TOKEN = "rt8xZq4LmP2vN7sK1wJ3hT6yB9cF5dG0aE";
const GITHUB_TOKEN = ["ghp_", "k3Jx9QvT2mLw8RbN4cYh6ZpD1sFa7GeU5oVi"].join("");

describe("auth record text cut inside a credential", () => {
  let up: ScriptedUpstream;
  let proxy: TestProxy;
  let client: WireClient;
  beforeAll(async () => {
    up = await startScriptedUpstream();
    proxy = await startTestProxy();
    client = wireClient(proxy);
  });
  afterAll(async () => {
    await client?.close();
    await proxy?.stop();
    await up?.close();
  });

  const form = { "content-type": "application/x-www-form-urlencoded" };
  const token = async (description: string, id: number): Promise<Record<string, unknown>> => {
    up.route("POST", "/token", (_req, res) => {
      const body = JSON.stringify({ error: "invalid_grant", error_description: description });
      res.writeHead(400, { "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) });
      res.end(body);
    });
    const res = await client.post(`${up.url}/token?n=${id}`, `grant_type=refresh_token&refresh_token=${REFRESH_TOKEN}&client_id=c-1`, form);
    expect(res.status).toBe(400);
    const rec = await proxy.waitForRecord((r) => r.event === "auth" && r.path === `/token?n=${id}`, { what: "auth record" });
    return (rec.response as Record<string, unknown>) ?? {};
  };

  it("a refresh token quoted across the cut is removed whole", async () => {
    const response = await token(`${"y".repeat(480)}${REFRESH_TOKEN} expired`, 1);
    expect(String(response.error_description)).not.toContain(REFRESH_TOKEN.slice(0, 12));
    expect(readFileSync(proxy.logFile, "utf8")).not.toContain(REFRESH_TOKEN.slice(0, 12));
  });

  it("a token recognised by its shape, across the cut, is masked", async () => {
    const response = await token(`${"y".repeat(479)} ${GITHUB_TOKEN} is not a grant`, 2);
    expect(String(response.error_description)).not.toContain(GITHUB_TOKEN.slice(4, 20));
    expect(readFileSync(proxy.logFile, "utf8")).not.toContain(GITHUB_TOKEN.slice(4, 20));
  });
});
