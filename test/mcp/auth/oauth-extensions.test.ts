/**
 * The grants of the OAuth extensions MCP clients meet, through the real proxy to a scripted token endpoint:
 * OpenID4VCI's pre-authorized code (with its transaction code), token exchange (RFC 8693), the JWT bearer
 * grant (RFC 7523), the device flow (RFC 8628) and CIBA. Each `auth` record names the grant and says which
 * credentials were sent, never their values; no value reaches the log, even where the server repeats it.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestProxy, type LogRecord, type TestProxy } from "../../helpers/proxy-harness.js";
import { json, startScriptedUpstream, type ScriptedUpstream } from "../../helpers/scripted-mcp-upstream.js";
import { wireClient, type WireClient } from "../../policy/wire-client.js";
import { expectRecordsMatchSchemas } from "../../records/expect-records.js";

const V = {
  preAuthorizedCode: "SplxlOBeZQQYbYS6WxSbIA",
  txCode: "493536",
  subjectToken: "st-opaque-7Hf2Kq9Lw3Zx",
  actorToken: "act-opaque-4Rg8Tn1Vb6",
  assertion: "as-opaque-9Df6Gh9Jk2Lq",
  deviceCode: "GmRhmhcxhwAzkoEqiMEg_DnyEysNkuNhszIySk9eS",
  authReqId: "1c266114-a1be-4252-8ad1-04986c5b9ac1",
  issued: "at-issued-5Yp3Wm8Qs1",
};

const GRANTS = [
  {
    name: "OpenID4VCI pre-authorized code",
    form: { grant_type: "urn:ietf:params:oauth:grant-type:pre-authorized_code", "pre-authorized_code": V.preAuthorizedCode, tx_code: V.txCode },
    carried: { "pre-authorized_code": true, tx_code: true },
  },
  {
    name: "token exchange",
    form: {
      grant_type: "urn:ietf:params:oauth:grant-type:token-exchange",
      subject_token: V.subjectToken,
      subject_token_type: "urn:ietf:params:oauth:token-type:access_token",
      actor_token: V.actorToken,
      actor_token_type: "urn:ietf:params:oauth:token-type:jwt",
      resource: "https://mcp.example/mcp",
    },
    carried: { subject_token: true, actor_token: true },
  },
  { name: "JWT bearer", form: { grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer", assertion: V.assertion, scope: "mcp" }, carried: { assertion: true } },
  { name: "device flow", form: { grant_type: "urn:ietf:params:oauth:grant-type:device_code", device_code: V.deviceCode, client_id: "c-1" }, carried: { device_code: true } },
  { name: "CIBA", form: { grant_type: "urn:openid:params:grant-type:ciba", auth_req_id: V.authReqId, client_id: "c-1" }, carried: { auth_req_id: true } },
] as const;

describe("OAuth extension grants", () => {
  let up: ScriptedUpstream;
  let proxy: TestProxy;
  let client: WireClient;
  beforeAll(async () => {
    up = await startScriptedUpstream();
    up.route("POST", "/token", (req, res) => {
      const sent = [...new URLSearchParams(req.body.toString("utf8")).values()].filter((v) => Object.values(V).includes(v));
      json(res, { access_token: V.issued, token_type: "Bearer", expires_in: 300, issued_token_type: "urn:ietf:params:oauth:token-type:access_token" }, {
        "x-debug": `accepted ${sent.join(" ")}`,
      });
    });
    // Where a wallet is sent the offer: the pre-authorized code in a query.
    up.route("GET", "/offer", (_req, res) => json(res, {}));
    proxy = await startTestProxy();
    client = wireClient(proxy);
  });
  afterAll(async () => {
    await client?.close();
    await proxy?.stop();
    await up?.close();
  });

  for (const [n, grant] of GRANTS.entries()) {
    it(`${grant.name}: the grant is named, its credentials only as booleans`, async () => {
      const res = await client.post(`${up.url}/token?g=${n}`, new URLSearchParams(grant.form).toString(), { "content-type": "application/x-www-form-urlencoded" });
      expect(res.status).toBe(200);
      const auth = await proxy.waitForRecord((r) => r.event === "auth" && r.path === `/token?g=${n}`, { what: "auth record" });
      expect(auth).toMatchObject({ step: "token", request: { grant_type: grant.form.grant_type, ...grant.carried }, response: { access_token: true } });
      const http = await proxy.waitForRecord((r) => r.event === "http" && r.path === `/token?g=${n}`, { what: "http record" });
      const text = JSON.stringify([auth, http]);
      for (const value of Object.values(grant.form)) if (Object.values(V).includes(value)) expect(text).not.toContain(value);
    });
  }

  it("token exchange: the issued token type is named", async () => {
    const auth = await proxy.waitForRecord((r) => r.event === "auth" && r.path === "/token?g=1", { what: "auth record" });
    expect((auth.response as LogRecord).issued_token_type).toBe("urn:ietf:params:oauth:token-type:access_token");
  });

  it("a credential offer's pre-authorized code in a query is redacted", async () => {
    const res = await fetchThroughProxy(`${up.url}/offer?pre-authorized_code=${V.preAuthorizedCode}&tx_code=${V.txCode}&state=xyz`);
    expect(res).toBe(200);
    const http = await proxy.waitForRecord((r) => r.event === "http" && String(r.path).startsWith("/offer"), { what: "http record" });
    expect(http.path).toBe("/offer?pre-authorized_code=[redacted]&tx_code=[redacted]&state=xyz");
  });

  it("no value anywhere in the log; every record matches its schema", async () => {
    const log = readFileSync(proxy.logFile, "utf8");
    const records = await proxy.stop();
    for (const [name, value] of Object.entries(V)) expect(log, name).not.toContain(value);
    expectRecordsMatchSchemas(records, "start", "auth", "http", "stop");
  });

  async function fetchThroughProxy(url: string): Promise<number> {
    const { ProxyAgent, request } = await import("undici");
    const agent = new ProxyAgent({ uri: proxy.url, requestTls: { ca: proxy.caPem } });
    try {
      const res = await request(url, { dispatcher: agent });
      await res.body.dump();
      return res.statusCode;
    } finally {
      await agent.close();
    }
  }
});
