/**
 * OAuth traffic around an MCP server (authorization spec 2025-06-18) through the real proxy: challenge,
 * discovery, dynamic client registration and token exchange become `event: "auth"` records, and no token,
 * secret, code or verifier ever reaches the log.
 */
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import https from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { gzipSync } from "node:zlib";
import { ProxyAgent, fetch } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authorizationScheme, discoveryDocument } from "../../src/mcp/auth-traffic.js";
import { findChallenge, parseWwwAuthenticate } from "../../src/mcp/www-authenticate.js";
import { startTestProxy, type LogRecord, type TestProxy } from "../helpers/proxy-harness.js";
import { testPki } from "../helpers/test-pki.js";
import { expectRecordsMatchSchemas } from "../records/expect-records.js";

const rand = () => randomBytes(9).toString("hex");
const SECRETS = {
  accessToken: `at-canary-${rand()}`,
  refreshToken: `rt-canary-${rand()}`,
  // A JWT-shaped id_token: the JWT rule in redactText must not be what saves us, the record must not copy it.
  idToken: `eyJhbGciOiJub25lIn0.eyJzdWIiOiJjYW5hcnktJHtyYW5kKCl9In0.idt-canary-${rand()}`,
  clientSecret: `cs-canary-${rand()}`,
  code: `code-canary-${rand()}`,
  codeVerifier: `cv-canary-${rand()}-${rand()}-${rand()}`,
  registrationAccessToken: `rat-canary-${rand()}`,
  // Short on purpose: OAuth secrets are removed by value from 6 characters, not only long ones.
  staleRefreshToken: `rt${randomBytes(2).toString("hex")}`,
};
const CLIENT_ID = "client-4711";
const REDIRECT_URI = "http://127.0.0.1:33418/callback";

interface Upstream {
  port: number;
  base: string;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": String(Buffer.byteLength(text)), ...headers });
  res.end(text);
}

/** An MCP resource server and its authorization server on one https origin, scripted for the flow. */
async function startOAuthUpstream(): Promise<Upstream> {
  const pki = testPki();
  const sockets = new Set<Socket>();
  let base = "";
  const handle = (req: IncomingMessage, res: ServerResponse, body: string): void => {
    const url = new URL(req.url ?? "/", base);
    const key = `${req.method} ${url.pathname}`;
    const resourceMetadata = `${base}/.well-known/oauth-protected-resource/mcp`;
    switch (key) {
      case "POST /mcp": {
        const auth = req.headers.authorization;
        if (auth !== `Bearer ${SECRETS.accessToken}`) {
          return send(res, 401, { error: "invalid_token" }, {
            "www-authenticate": `Bearer resource_metadata="${resourceMetadata}", scope="mcp:tools"`,
          });
        }
        const message = JSON.parse(body) as { id?: number; method?: string };
        if (message.method === "tools/call") {
          return send(res, 403, { error: "insufficient_scope" }, {
            "www-authenticate":
              `Bearer error="insufficient_scope", scope="mcp:tools mcp:admin", resource_metadata="${resourceMetadata}", ` +
              'error_description="the \\"admin\\" tool needs mcp:admin, sorry"',
          });
        }
        return send(
          res,
          200,
          { jsonrpc: "2.0", id: message.id, result: { protocolVersion: "2025-06-18", capabilities: {}, serverInfo: { name: "s", version: "1" } } },
          { "mcp-session-id": "sess-1" },
        );
      }
      case "GET /.well-known/oauth-protected-resource/mcp":
        return send(res, 200, {
          resource: `${base}/mcp`,
          authorization_servers: [`${base}/`],
          scopes_supported: ["mcp:tools", "mcp:admin"],
          bearer_methods_supported: ["header"],
        });
      case "GET /.well-known/oauth-authorization-server": {
        // gzip, to exercise content-decoding
        const metadata = {
          issuer: `${base}/`,
          authorization_endpoint: `${base}/authorize`,
          token_endpoint: `${base}/token`,
          registration_endpoint: `${base}/register`,
          scopes_supported: ["mcp:tools", "mcp:admin"],
          response_types_supported: ["code"],
          grant_types_supported: ["authorization_code", "refresh_token"],
          code_challenge_methods_supported: ["S256"],
          token_endpoint_auth_methods_supported: ["client_secret_post", "none"],
        };
        const gz = gzipSync(JSON.stringify(metadata));
        res.writeHead(200, { "content-type": "application/json", "content-encoding": "gzip", "content-length": String(gz.length) });
        return void res.end(gz);
      }
      case "GET /.well-known/openid-configuration":
        res.writeHead(404, { "content-length": "0" });
        return void res.end();
      case "GET /.well-known/oauth-authorization-server/huge":
        return send(res, 200, { issuer: `${base}/`, padding: "x".repeat(100 * 1024) });
      case "POST /register":
        return send(res, 201, {
          client_id: CLIENT_ID,
          client_secret: SECRETS.clientSecret,
          client_secret_expires_at: 0,
          client_id_issued_at: 1_700_000_000,
          registration_access_token: SECRETS.registrationAccessToken,
          redirect_uris: [REDIRECT_URI],
          token_endpoint_auth_method: "client_secret_post",
        });
      case "POST /token": {
        const form = new URLSearchParams(body);
        if (form.get("grant_type") === "refresh_token") {
          return send(res, 400, { error: "invalid_grant", error_description: `refresh token ${form.get("refresh_token")} expired` });
        }
        return send(res, 200, {
          access_token: SECRETS.accessToken,
          token_type: "Bearer",
          expires_in: 3600,
          refresh_token: SECRETS.refreshToken,
          id_token: SECRETS.idToken,
          scope: "mcp:tools",
        });
      }
      default:
        send(res, 404, { error: "not_found" });
    }
  };
  const server = https.createServer({ cert: pki.serverCertPem, key: pki.serverKeyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => handle(req, res, Buffer.concat(chunks).toString("utf8")));
  });
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.once("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  base = `https://127.0.0.1:${port}`;
  return {
    port,
    base,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}

describe("auth records through the proxy", () => {
  let proxy: TestProxy;
  let upstream: Upstream;
  let agent: ProxyAgent;
  let auth: LogRecord[];

  const post = (path: string, body: string, headers: Record<string, string>) =>
    fetch(`${upstream.base}${path}`, { method: "POST", body, headers, dispatcher: agent });
  const get = (path: string) => fetch(`${upstream.base}${path}`, { dispatcher: agent });
  const byStep = (step: string) => auth.filter((r) => r.step === step);

  beforeAll(async () => {
    proxy = await startTestProxy();
    upstream = await startOAuthUpstream();
    agent = new ProxyAgent({ uri: proxy.url, requestTls: { ca: proxy.caPem } });

    const initialize = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "c", version: "1" } },
    });
    const mcpHeaders = { "content-type": "application/json", accept: "application/json, text/event-stream" };

    // 1. unauthenticated MCP request → 401 challenge
    const first = await post("/mcp", initialize, mcpHeaders);
    expect(first.status).toBe(401);
    const challenge = first.headers.get("www-authenticate") ?? "";
    await first.arrayBuffer();
    const metadataUrl = /resource_metadata="([^"]+)"/.exec(challenge)?.[1] ?? "";
    expect(metadataUrl).toBe(`${upstream.base}/.well-known/oauth-protected-resource/mcp`);
    // 2. protected-resource metadata, 3. authorization-server metadata (OIDC tried first, 404)
    const prm = await fetch(metadataUrl, { dispatcher: agent });
    expect(((await prm.json()) as { resource: string }).resource).toBe(`${upstream.base}/mcp`);
    const oidc = await get("/.well-known/openid-configuration");
    expect(oidc.status).toBe(404);
    await oidc.arrayBuffer();
    const asm = await get("/.well-known/oauth-authorization-server");
    expect(((await asm.json()) as { token_endpoint: string }).token_endpoint).toBe(`${upstream.base}/token`);
    // 4. dynamic client registration
    const reg = await post(
      "/register",
      JSON.stringify({
        client_name: "Test MCP Client",
        redirect_uris: [REDIRECT_URI],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "client_secret_post",
      }),
      { "content-type": "application/json" },
    );
    expect(reg.status).toBe(201);
    await reg.arrayBuffer();
    // 5. token exchange (authorization_code + PKCE + client_secret_post)
    const tokenForm = new URLSearchParams({
      grant_type: "authorization_code",
      code: SECRETS.code,
      redirect_uri: REDIRECT_URI,
      code_verifier: SECRETS.codeVerifier,
      client_id: CLIENT_ID,
      client_secret: SECRETS.clientSecret,
      resource: `${upstream.base}/mcp`,
    });
    const token = await post("/token", tokenForm.toString(), { "content-type": "application/x-www-form-urlencoded" });
    expect(((await token.json()) as { access_token: string }).access_token).toBe(SECRETS.accessToken);
    // 6. the MCP request again, with the token
    const authed = { ...mcpHeaders, authorization: `Bearer ${SECRETS.accessToken}` };
    const second = await post("/mcp", initialize, authed);
    expect(second.status).toBe(200);
    await second.arrayBuffer();
    // 7. step-up: a tool call needs more scope → 403 insufficient_scope
    const call = JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "admin", arguments: {} } });
    const third = await post("/mcp", call, { ...authed, "mcp-session-id": "sess-1", "mcp-protocol-version": "2025-06-18" });
    expect(third.status).toBe(403);
    await third.arrayBuffer();
    // 8. a refresh that fails, with the (stale) refresh token echoed in the error_description
    const refresh = await post(
      "/token",
      new URLSearchParams({ grant_type: "refresh_token", refresh_token: SECRETS.staleRefreshToken, client_id: CLIENT_ID }).toString(),
      { "content-type": "application/x-www-form-urlencoded; charset=utf-8" },
    );
    expect(refresh.status).toBe(400);
    await refresh.arrayBuffer();
    // 9. a metadata document over the inspection bound
    const huge = await get("/.well-known/oauth-authorization-server/huge");
    await huge.arrayBuffer();

    auth = await proxy.waitForRecords((r) => r.event === "auth", 9, { what: "auth records" });
    // The http records are written first; wait for all of them too, so nothing is still on its way.
    await proxy.waitForRecords((r) => r.event === "http", 10, { what: "http records" });
  });

  afterAll(async () => {
    await agent?.close();
    await upstream?.close();
    await proxy?.stop();
  });

  it("writes one auth record per auth-related exchange, and none for the authorized MCP request", () => {
    expect(auth.map((r) => r.step)).toEqual([
      "challenge",
      "discovery",
      "discovery",
      "discovery",
      "registration",
      "token",
      "challenge",
      "token",
      "discovery",
    ]);
  });

  it("every record of the run, each auth step among them, parses with its schema", async () => {
    expectRecordsMatchSchemas(await proxy.records(), "auth", "http", "rpc");
  });

  it("records the 401 challenge with its parsed parameters", () => {
    const [c] = byStep("challenge");
    expect(c).toMatchObject({
      level: "info",
      event: "auth",
      step: "challenge",
      server: `127.0.0.1:${upstream.port}`,
      method: "POST",
      path: "/mcp",
      status: 401,
      authorization: null,
      challenge: {
        scheme: "Bearer",
        resource_metadata: `${upstream.base}/.well-known/oauth-protected-resource/mcp`,
        scope: "mcp:tools",
      },
    });
    expect(typeof c!.flow).toBe("string");
    expect(typeof c!.time).toBe("string");
  });

  it("records a 403 insufficient_scope challenge, unescaping quoted strings", () => {
    const c = byStep("challenge")[1];
    expect(c).toMatchObject({
      status: 403,
      authorization: "Bearer",
      challenge: {
        scheme: "Bearer",
        error: "insufficient_scope",
        scope: "mcp:tools mcp:admin",
        error_description: 'the "admin" tool needs mcp:admin, sorry',
        resource_metadata: `${upstream.base}/.well-known/oauth-protected-resource/mcp`,
      },
    });
  });

  it("records discovery documents with their key metadata (gzip decoded), and 404s without metadata", () => {
    const [prm, oidc, asm, huge] = byStep("discovery");
    expect(prm).toMatchObject({
      method: "GET",
      path: "/.well-known/oauth-protected-resource/mcp",
      status: 200,
      document: "oauth-protected-resource",
      metadata: {
        resource: `${upstream.base}/mcp`,
        authorization_servers: [`${upstream.base}/`],
        scopes_supported: ["mcp:tools", "mcp:admin"],
      },
    });
    expect(oidc).toMatchObject({ status: 404, document: "openid-configuration" });
    expect(oidc).not.toHaveProperty("metadata");
    expect(oidc).not.toHaveProperty("bodyProblems");
    expect(asm).toMatchObject({
      status: 200,
      document: "oauth-authorization-server",
      metadata: {
        issuer: `${upstream.base}/`,
        authorization_endpoint: `${upstream.base}/authorize`,
        token_endpoint: `${upstream.base}/token`,
        registration_endpoint: `${upstream.base}/register`,
        grant_types_supported: ["authorization_code", "refresh_token"],
        code_challenge_methods_supported: ["S256"],
        token_endpoint_auth_methods_supported: ["client_secret_post", "none"],
      },
    });
    expect(asm).not.toHaveProperty("truncated");
    expect(huge).toMatchObject({ status: 200, document: "oauth-authorization-server", truncated: true });
    expect(huge).not.toHaveProperty("metadata");
  });

  it("records the registration: what was asked, and only whether a secret was issued", () => {
    const [r] = byStep("registration");
    expect(r).toMatchObject({
      level: "info",
      method: "POST",
      path: "/register",
      status: 201,
      request: {
        client_name: "Test MCP Client",
        redirect_uris: [REDIRECT_URI],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "client_secret_post",
      },
      response: {
        client_id: CLIENT_ID,
        client_secret: true,
        client_secret_expires_at: 0,
        registration_access_token: true,
      },
    });
  });

  it("records the token exchange with booleans for every credential", () => {
    const [t] = byStep("token");
    expect(t).toMatchObject({
      level: "info",
      path: "/token",
      status: 200,
      authorization: null,
      request: {
        grant_type: "authorization_code",
        client_id: CLIENT_ID,
        resource: `${upstream.base}/mcp`,
        redirect_uri: REDIRECT_URI,
        code: true,
        code_verifier: true,
        client_secret: true,
        refresh_token: false,
        client_assertion: false,
        client_auth: "client_secret_post",
      },
      response: {
        token_type: "Bearer",
        expires_in: 3600,
        scope: "mcp:tools",
        access_token: true,
        refresh_token: true,
        id_token: true,
      },
    });
  });

  it("records a failed refresh as a warning, with the error but not the token it names", () => {
    const t = byStep("token")[1];
    expect(t).toMatchObject({
      level: "warn",
      status: 400,
      request: { grant_type: "refresh_token", client_id: CLIENT_ID, refresh_token: true, code: false, client_auth: "none" },
      response: { error: "invalid_grant", access_token: false, refresh_token: false, id_token: false },
    });
    // The server echoed the refresh token in free text: removed by value, since the request carried it.
    expect((t!.response as Record<string, unknown>).error_description).toBe("refresh token [redacted] expired");
  });

  it("never writes a token, secret, code or verifier anywhere in the log", async () => {
    const text = await readFile(proxy.logFile, "utf8");
    expect(text.length).toBeGreaterThan(0);
    for (const [name, secret] of Object.entries(SECRETS)) {
      expect(text.includes(secret), `${name} leaked into the log`).toBe(false);
    }
    // Not even the random parts on their own (a partly redacted value would still leak them).
    for (const secret of Object.values(SECRETS)) {
      const tail = secret.split("-").at(-1)!;
      expect(text.includes(tail)).toBe(false);
    }
  });
});

describe("WWW-Authenticate parsing", () => {
  it("reads auth-params with quoted strings, escapes and commas inside quotes", () => {
    const [c] = parseWwwAuthenticate('Bearer realm="a\\"b, c", scope="x y", error=invalid_token , error_description="say \\\\ hi"');
    expect(c?.scheme).toBe("Bearer");
    expect(Object.fromEntries(c!.params)).toEqual({
      realm: 'a"b, c',
      scope: "x y",
      error: "invalid_token",
      error_description: "say \\ hi",
    });
  });

  it("separates several challenges, token68 included, and finds Bearer case-insensitively", () => {
    const list = parseWwwAuthenticate('Basic realm="r", NewAuth abc123==, bearer resource_metadata="https://h/x", Negotiate');
    expect(list.map((c) => c.scheme)).toEqual(["Basic", "NewAuth", "bearer", "Negotiate"]);
    expect(list[1]!.token68).toBe(true);
    expect(findChallenge(list, "Bearer")?.params.get("resource_metadata")).toBe("https://h/x");
    // node joins repeated headers; arrays are accepted too
    expect(parseWwwAuthenticate(["Basic realm=x", 'Bearer scope="s"']).map((c) => c.scheme)).toEqual(["Basic", "Bearer"]);
  });

  it("is lenient with junk and unterminated quotes, and keeps the first of a repeated parameter", () => {
    expect(parseWwwAuthenticate("")).toEqual([]);
    expect(parseWwwAuthenticate(", ,")).toEqual([]);
    const [c] = parseWwwAuthenticate('Bearer scope="a", scope="b", realm="open');
    expect(c!.params.get("scope")).toBe("a");
    expect(c!.params.get("realm")).toBe("open");
    expect(() => parseWwwAuthenticate('"\\')).not.toThrow();
  });
});

describe("auth helpers", () => {
  it("recognises discovery paths", () => {
    expect(discoveryDocument("/.well-known/oauth-protected-resource")).toBe("oauth-protected-resource");
    expect(discoveryDocument("/.well-known/oauth-protected-resource/mcp?x=1")).toBe("oauth-protected-resource");
    expect(discoveryDocument("/.well-known/oauth-authorization-server/tenant1")).toBe("oauth-authorization-server");
    expect(discoveryDocument("/tenant1/.well-known/openid-configuration")).toBe("openid-configuration");
    expect(discoveryDocument("/.well-known/oauth-protected-resourcex")).toBeUndefined();
    expect(discoveryDocument("/mcp")).toBeUndefined();
  });

  it("names only known Authorization schemes, never a credential", () => {
    expect(authorizationScheme(undefined)).toBeNull();
    expect(authorizationScheme("Bearer abc")).toBe("Bearer");
    expect(authorizationScheme("bearer abc")).toBe("Bearer");
    expect(authorizationScheme("DPoP abc")).toBe("DPoP");
    expect(authorizationScheme("Basic dXNlcjpwYXNz")).toBe("Basic");
    // a bare token, or an unknown scheme, is never echoed
    expect(authorizationScheme("sk-live-canary")).toBe("other");
    expect(authorizationScheme("sk-live-canary more")).toBe("other");
  });
});
