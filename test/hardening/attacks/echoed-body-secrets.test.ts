/**
 * A token endpoint that repeats what the client sent it: the refresh token, code, verifier, client secret,
 * password, device code, subject token or assertion of a form or JSON request body, quoted in
 * `WWW-Authenticate`, a debug header or a `Location` (percent-encoded or not). The `auth` record removed them,
 * but the exchange's `http` record kept its response headers in clear (and `export --har`, `--html`,
 * `tail --json` and the UI are built from the log). Every credential the proxy reads in a body is now removed
 * by value from every record of its exchange.
 */
import { readFileSync } from "node:fs";
import { gunzipSync, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, startTestProxy, type LogRecord, type TestProxy } from "../../helpers/proxy-harness.js";
import { startScriptedUpstream, type ScriptedUpstream } from "../../helpers/scripted-mcp-upstream.js";
import { wireClient, type WireClient } from "../../policy/wire-client.js";

/** Opaque values, no shape to recognise them by; `/`, `+`, `=` and a space make the encoded forms differ. */
const SECRETS: Record<string, string> = {
  refresh_token: "RTx9/k3+Qm=Lp2 vN7",
  code: "AC8xZq4LmP/2vN7s",
  code_verifier: "cv0Zq4Lm+P2vN7sK1wJ3hT6yB9cF5dG0aEx4",
  client_secret: "cs4Lm P2/vN7sK1+wJ",
  password: "pw9Zq4+Lm/P2 vN",
  device_code: "dc7Hf2/Kq9+Lw3=Zx",
  subject_token: "st5Rg8/Tn1+Vb6 Yp",
  assertion: "as3Df6/Gh9+Jk2=Lq",
};

/** Every way a server may write a value back: as is, percent-encoded, form-encoded. */
function spellings(value: string): string[] {
  return [value, encodeURIComponent(value), new URLSearchParams({ v: value }).toString().slice(2)];
}

function expectAbsent(text: string, what: string): void {
  for (const [name, value] of Object.entries(SECRETS)) {
    for (const spelling of spellings(value)) expect(text, `${name} (${spelling}) in ${what}`).not.toContain(spelling);
  }
}

describe("secrets a token endpoint echoes from the request body", () => {
  let up: ScriptedUpstream;
  let proxy: TestProxy;
  let client: WireClient;
  beforeAll(async () => {
    up = await startScriptedUpstream();
    // Answers every token request by quoting each credential it was sent, three ways.
    up.route("POST", "/token", (req, res) => {
      const text = (req.headers["content-encoding"] === "gzip" ? gunzipSync(req.body) : req.body).toString("utf8");
      const sent = req.json !== undefined ? Object.entries(req.json as Record<string, string>) : [...new URLSearchParams(text)];
      const quoted = sent.filter(([name]) => name in SECRETS).map(([, value]) => value);
      const body = JSON.stringify({ error: "invalid_grant" });
      res.writeHead(401, {
        "content-type": "application/json",
        "content-length": String(Buffer.byteLength(body)),
        "www-authenticate": `Bearer error="invalid_grant", error_description="grant ${quoted.join(" and ")} revoked"`,
        "x-debug": `received ${quoted.join(",")}`,
        location: `https://as.example/err?error_description=bad+${quoted.map(encodeURIComponent).join("+")}`,
        "x-debug-form": new URLSearchParams(quoted.map((v, i): [string, string] => [`v${i}`, v])).toString(),
      });
      res.end(body);
    });
    proxy = await startTestProxy();
    client = wireClient(proxy);
  });
  afterAll(async () => {
    await client?.close();
    await proxy?.stop();
    await up?.close();
  });

  const httpRecord = (path: string): Promise<LogRecord> => proxy.waitForRecord((r) => r.event === "http" && r.path === path, { what: `http record of ${path}` });

  it("form bodies: no record of the exchange keeps a credential it carried", async () => {
    const form = { "content-type": "application/x-www-form-urlencoded" };
    const grants = [
      ["refresh_token", { grant_type: "refresh_token", refresh_token: SECRETS.refresh_token!, client_id: "c-1" }],
      ["code", { grant_type: "authorization_code", code: SECRETS.code!, code_verifier: SECRETS.code_verifier!, client_secret: SECRETS.client_secret!, client_id: "c-1" }],
      ["password", { grant_type: "password", username: "ana", password: SECRETS.password! }],
      ["device", { grant_type: "urn:ietf:params:oauth:grant-type:device_code", device_code: SECRETS.device_code! }],
      ["exchange", { grant_type: "urn:ietf:params:oauth:grant-type:token-exchange", subject_token: SECRETS.subject_token!, subject_token_type: "urn:ietf:params:oauth:token-type:access_token" }],
      ["jwt", { grant_type: "urn:ietf:params:oauth:grant-type:jwt-bearer", assertion: SECRETS.assertion! }],
    ] as const;
    for (const [name, params] of grants) {
      const res = await client.post(`${up.url}/token?form=${name}`, new URLSearchParams(params).toString(), form);
      expect(res.status).toBe(401);
      // What the client got: the secrets in clear (the proxy changes no byte).
      expect(String(res.headers["x-debug"])).toContain(Object.entries(params).find(([k]) => k in SECRETS)![1]);
      const http = await httpRecord(`/token?form=${name}`);
      expectAbsent(JSON.stringify(http), `the http record of ${name}`);
    }
    await proxy.waitForRecords((r) => r.event === "auth" && String(r.path).startsWith("/token?form="), grants.length, { what: "auth records" });
    expectAbsent(readFileSync(proxy.logFile, "utf8"), "the log");
    // What a user reads or hands on is built from the log (needs `npm run build`).
    for (const args of [["export", "--har", "-"], ["export", "--html", "-"], ["tail", "--json"]]) {
      const out = await runCli([...args, proxy.logFile]);
      expect(out.code, out.stderr).toBe(0);
      expect(out.stdout).toContain("/token?form=password");
      expectAbsent(out.stdout, args.join(" "));
    }
  }, 30_000);

  it("a JSON body, and a gzip-encoded form (decoded after the response began)", async () => {
    const res = await client.post(`${up.url}/token?json=1`, JSON.stringify({ grant_type: "refresh_token", refresh_token: SECRETS.refresh_token, client_secret: SECRETS.client_secret }));
    expect(res.status).toBe(401);
    expectAbsent(JSON.stringify(await httpRecord("/token?json=1")), "the http record of a JSON body");

    const gz = gzipSync(new URLSearchParams({ grant_type: "authorization_code", code: SECRETS.code!, code_verifier: SECRETS.code_verifier! }).toString());
    const zipped = await client.post(`${up.url}/token?gzip=1`, gz, { "content-type": "application/x-www-form-urlencoded", "content-encoding": "gzip" });
    expect(zipped.status).toBe(401);
    expectAbsent(JSON.stringify(await httpRecord("/token?gzip=1")), "the http record of a gzip form");
    expectAbsent(readFileSync(proxy.logFile, "utf8"), "the log");
  });

  it("a credential the response body issues, repeated in that response's headers", async () => {
    const issued = { device_code: "dv4Kq9/Lw3+Zx7=Hf2", access_token: "at6Tn1/Vb6+Yp5=Rg8" };
    up.route("POST", "/device", (_req, res) => {
      const body = JSON.stringify({ ...issued, user_code: "WDJB-MJHT", verification_uri: "https://as.example/device", expires_in: 600 });
      res.writeHead(200, {
        "content-type": "application/json",
        "content-length": String(Buffer.byteLength(body)),
        "x-debug": `issued ${issued.device_code} ${issued.access_token}`,
        "content-location": `https://as.example/device/${encodeURIComponent(issued.device_code)}`,
      });
      res.end(body);
    });
    const res = await client.post(`${up.url}/device?n=1`, "client_id=c-1&scope=mcp", { "content-type": "application/x-www-form-urlencoded" });
    expect(res.status).toBe(200);
    const record = JSON.stringify(await httpRecord("/device?n=1"));
    for (const value of Object.values(issued)) for (const spelling of spellings(value)) expect(record).not.toContain(spelling);
  });
});
