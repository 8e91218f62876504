/**
 * Canary test: credentials sent through every path the proxy logs — request and response headers, query
 * strings, JSON-RPC params and results, SSE events, batches, OAuth token and registration bodies, error
 * paths (TLS failure, refused connection, refused requests, invalid JSON, invalid messages), the legacy
 * SSE endpoint URL, upgrades — then the whole log file, read as text, must not contain any of them.
 *
 * Canaries sit only in credential positions (an Authorization header, an `access_token` member, a
 * `?api_key=` parameter, ...). Free-form content a user sends (a tool argument called `message`) is
 * payload, logged on purpose, and carries no canary here.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import https from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { ProxyAgent, fetch } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PayloadMode } from "../../src/log/payload.js";
import {
  closedPort,
  openTunnel,
  rawProxyExchange,
  rawRequest,
  readAll,
  startTestProxy,
  tlsThroughTunnel,
  type LogRecord,
  type TestProxy,
} from "../helpers/proxy-harness.js";
import { selfSignedServerCert, testPki } from "../helpers/test-pki.js";
import { expectRecordsMatchSchemas } from "../records/expect-records.js";

const rand = () => randomBytes(8).toString("hex");
/** Each canary names its position, so a failure says where the leak is. */
const C = {
  /** `websocket` record path */
  upgrade: `canary-upgrade-${rand()}`,
  /** `refused` record of a request the HTTP parser rejected */
  malformed: `canary-malformed-${rand()}`,
  bearer: `canary-bearer-${rand()}`,
  cookie: `canary-cookie-${rand()}`,
  setCookie: `canary-setcookie-${rand()}`,
  apiKeyHeader: `canary-xapikey-${rand()}`,
  proxyAuth: `canary-proxyauth-${rand()}`,
  query: `canary-query-${rand()}`,
  params: `canary-params-${rand()}`,
  result: `canary-result-${rand()}`,
  sse: `canary-sse-${rand()}`,
  batch: `canary-batch-${rand()}`,
  errorData: `canary-errordata-${rand()}`,
  clientInfo: `canary-clientinfo-${rand()}`,
  form: `canary-form-${rand()}`,
  tokenResponse: `canary-tokenresponse-${rand()}`,
  registration: `canary-registration-${rand()}`,
  invalidJson: `canary-invalidjson-${rand()}`,
  invalidMessage: `canary-invalidmessage-${rand()}`,
  tlsFailure: `canary-tlsfailure-${rand()}`,
  refusedConn: `canary-refusedconn-${rand()}`,
  hostMismatch: `canary-hostmismatch-${rand()}`,
  legacy: `canary-legacy-${rand()}`,
  plainProxy: `canary-plainproxy-${rand()}`,
  jwt: `eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjYW5hcnkifQ.canary-jwt-${rand()}`,
  /** Ocp-Apim-Subscription-Key, X-Functions-Key, X-Access-Key, Password, Authentication headers */
  cloudHeaders: `canary-cloudheaders-${rand()}`,
  /** db_password, api_token, auth_token, secret_key, passphrase, pwd members */
  members: `canary-members-${rand()}`,
  /** Query parameters after `;` (Rack, PHP, parse_qs(separator=";") read them) and path parameters (`/mcp;api_key=`) */
  separators: `canary-separators-${rand()}`,
  /** hapikey, authkey, pass, pw, dsn, connection_string members; appid, sk, pat, hapikey query parameters */
  names: `canary-names-${rand()}`,
  /** X-Amz-Security-Token, X-Amz-Signature, sig, jwt query parameters */
  presigned: `canary-presigned-${rand()}`,
  /** A key under ordinary names: in the initialize answer (session record), an invalid message, a result */
  awsKey: `AKIA${randomBytes(8).toString("hex").toUpperCase()}`,
  /** A token by its shape in an ordinary response header (`http` record) and an OAuth error text (`auth` record) */
  shaped: `ghp_${randomBytes(18).toString("hex")}`,
};

/**
 * Leaks found by this test in code outside the log modules (src/proxy/server.ts), reported to its owner.
 * Their tests are `it.fails`: once the record is redacted they start failing — then move the canary up to C.
 */

interface Upstreams {
  httpsPort: number;
  httpPort: number;
  /** An https server whose certificate the proxy does not trust. */
  badTlsPort: number;
  close(): Promise<void>;
}

function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string | string[]> = {}): void {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  res.writeHead(status, { ...headers, "content-type": "application/json", "content-length": String(Buffer.byteLength(text)) });
  res.end(text);
}

function sse(res: ServerResponse, events: string[], headers: Record<string, string> = {}): void {
  res.writeHead(200, { ...headers, "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const e of events) res.write(e);
  res.end();
}

/** The JSON-RPC server behind `POST /mcp`: every answer carries credentials in credential positions. */
function mcp(res: ServerResponse, raw: string, req: IncomingMessage): void {
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    // A parse error whose data names the offending credential.
    return sendJson(res, 400, { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error", data: { password: C.errorData } } });
  }
  if (Array.isArray(body)) {
    return sendJson(
      res,
      200,
      body.map((m: { id: number }) => ({ jsonrpc: "2.0", id: m.id, result: { token: C.batch, items: [{ secret: C.batch }] } })),
    );
  }
  const m = body as { id?: string | number; method?: string; params?: { name?: string; _meta?: { progressToken?: string } } };
  if (m.method === undefined || m.id === undefined) {
    res.writeHead(202, { "content-length": "0" });
    return void res.end();
  }
  const reply = (result: unknown) => JSON.stringify({ jsonrpc: "2.0", id: m.id, result });
  switch (m.method === "tools/call" ? `tools/call:${m.params?.name}` : m.method) {
    case "initialize":
      return sendJson(
        res,
        200,
        reply({
          protocolVersion: "2025-06-18",
          capabilities: { tools: {} },
          serverInfo: { name: "canary-server", version: "1.0.0", apiKey: C.result, description: `deploys with ${C.awsKey}` },
          instructions: "be nice",
        }),
        { "mcp-session-id": "session-plain-1", "set-cookie": [`sid=${C.setCookie}; HttpOnly`, `csrf=${C.setCookie}`] },
      );
    case "tools/call:login":
      return sse(res, [
        `id: 1\nevent: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: m.params?._meta?.progressToken, progress: 1, message: "working" } })}\n\n`,
        `id: 2\nevent: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", id: "srv-1", method: "sampling/createMessage", params: { messages: [], maxTokens: 5, metadata: { access_token: C.sse } } })}\n\n`,
        // An event that is not JSON: its credential must not come back through the decoder's error message.
        `id: 3\nevent: message\ndata: {"password": "${C.sse}", "access_token": "${C.sse}\n\n`,
        `id: 4\nevent: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: "ok" }], structuredContent: { access_token: C.result, refresh_token: C.result, id_token: C.jwt, session: { password: C.result, client_secret: C.result } } } })}\n\n`,
      ]);
    case "tools/call:fail":
      return sendJson(res, 200, { jsonrpc: "2.0", id: m.id, error: { code: -32602, message: "bad credentials", data: { client_secret: C.errorData, apiKey: C.errorData } } });
    case "tools/call:bad-result":
      // Not a valid JSON-RPC response (result is a string): an `invalid` record that carries the message.
      return sendJson(res, 200, { jsonrpc: "2.0", id: m.id, result: "nope", password: C.invalidMessage, access_token: C.invalidMessage });
    case "tools/call:broken-json":
      return sendJson(res, 200, `{"jsonrpc":"2.0","id":${JSON.stringify(m.id)},"result":{"password":"${C.invalidJson}"`);
    case "tools/call:echo-credentials": {
      // A server that quotes what the client sent: every credential comes back in free text, by value.
      const h = req.headers;
      const quoted = [h.authorization, h["x-api-key"], h.cookie, h["ocp-apim-subscription-key"], h["x-functions-key"], h["x-access-key"], h.password, h.authentication, req.url].join(" | ");
      return sendJson(res, 200, { jsonrpc: "2.0", id: m.id, error: { code: -32001, message: `rejected: ${quoted}`, data: { request: quoted } } });
    }
    case "tools/call:echo-result": {
      const h = req.headers;
      return sendJson(res, 200, { jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: `you sent ${h.authorization} and ${h.cookie}; deploy key ${C.awsKey}` }] } });
    }
    case "tools/call:echo-invalid":
      // Not valid JSON-RPC (result is a number and there is no jsonrpc member): an `invalid` record with the whole message.
      return sendJson(res, 200, { id: m.id, result: 7, note: `auth was ${req.headers.authorization}`, key: `${C.awsKey}`, members: (JSON.parse(raw) as { params: unknown }).params });
    case "tools/call:hang":
      // The stream ends without an answer: an `unanswered` record.
      return sse(res, []);
    default:
      return sendJson(res, 200, reply({}));
  }
}

async function startUpstreams(): Promise<Upstreams> {
  const sockets = new Set<Socket>();
  const legacyStreams = new Map<string, ServerResponse>();
  const handler = (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      const url = new URL(req.url ?? "/", "http://x");
      const key = `${req.method} ${url.pathname}`;
      switch (key) {
        case "POST /mcp":
          return mcp(res, raw, req);
        case "GET /sse": {
          // Legacy HTTP+SSE: the endpoint URL carries a credential as a query parameter.
          const id = rand();
          res.writeHead(200, { "content-type": "text/event-stream" });
          res.write(`event: endpoint\ndata: /message?sessionId=${id}&access_token=${C.legacy}\n\n`);
          legacyStreams.set(id, res);
          return;
        }
        case "POST /message": {
          const stream = legacyStreams.get(url.searchParams.get("sessionId") ?? "");
          res.writeHead(202, { "content-length": "0" });
          res.end();
          const m = JSON.parse(raw) as { id?: number; method?: string };
          if (!stream || m.id === undefined) return;
          const result =
            m.method === "initialize"
              ? { protocolVersion: "2024-11-05", capabilities: {}, serverInfo: { name: "legacy", version: "1" } }
              : { access_token: C.legacy, content: [] };
          stream.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", id: m.id, result })}\n\n`);
          if (m.method === "tools/call") stream.end();
          return;
        }
        case "POST /token": {
          const isJson = (req.headers["content-type"] ?? "").includes("json");
          const grant = isJson ? (JSON.parse(raw) as { grant_type?: string }).grant_type : new URLSearchParams(raw).get("grant_type");
          if (grant === "refresh_token") {
            return sendJson(res, 400, { error: "invalid_grant", error_description: `refresh_token ${C.form} is revoked; ask ${C.shaped}` });
          }
          return sendJson(res, 200, {
            access_token: C.tokenResponse,
            refresh_token: C.tokenResponse,
            id_token: C.jwt,
            token_type: "Bearer",
            expires_in: 60,
          });
        }
        case "POST /register":
          return sendJson(res, 201, {
            client_id: "public-client-id",
            client_secret: C.registration,
            registration_access_token: C.registration,
            redirect_uris: ["http://127.0.0.1:1/cb"],
          });
        case "GET /protected":
          return sendJson(res, 401, { error: "invalid_token" }, {
            "www-authenticate": `Bearer error="invalid_token", error_description="token ${C.bearer} has expired"`,
          });
        default:
          return sendJson(res, 200, { ok: true }, { "x-debug": `deployed by ${C.shaped}` });
      }
    });
  };
  const track = (server: http.Server): void => {
    server.on("connection", (s: Socket) => {
      sockets.add(s);
      s.once("close", () => sockets.delete(s));
    });
    // A plain answer to every upgrade: enough for the proxy's websocket record.
    server.on("upgrade", (_req, socket: Socket) => {
      socket.end("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n");
    });
  };
  const pki = testPki();
  const secure = https.createServer({ cert: pki.serverCertPem, key: pki.serverKeyPem }, handler);
  const plain = http.createServer(handler);
  const selfSigned = selfSignedServerCert();
  const bad = https.createServer({ cert: selfSigned.certPem, key: selfSigned.keyPem }, handler);
  bad.on("tlsClientError", () => undefined);
  const servers = [secure, plain, bad];
  servers.forEach(track);
  const ports = await Promise.all(
    servers.map((s) => new Promise<number>((resolve) => s.listen(0, "127.0.0.1", () => resolve((s.address() as AddressInfo).port)))),
  );
  return {
    httpsPort: ports[0]!,
    httpPort: ports[1]!,
    badTlsPort: ports[2]!,
    close: async () => {
      for (const stream of legacyStreams.values()) stream.destroy();
      await Promise.all(
        servers.map(
          (s) =>
            new Promise<void>((resolve) => {
              s.close(() => resolve());
              s.closeAllConnections();
            }),
        ),
      );
      for (const s of sockets) s.destroy();
    },
  };
}

const MODES: { payloads: PayloadMode; maxPayloadBytes?: number }[] = [
  { payloads: "full" },
  // Small enough that results become previews: a preview must be cut from the redacted text.
  { payloads: "truncated", maxPayloadBytes: 96 },
  { payloads: "none" },
];

describe.each(MODES)("no credential reaches the log (payloads: $payloads)", (mode) => {
  let proxy: TestProxy;
  let up: Upstreams;
  let agent: ProxyAgent;
  let logText = "";
  let records: LogRecord[] = [];
  let logDir: string | undefined;
  let logFile = "";

  beforeAll(async () => {
    up = await startUpstreams();
    // Our own log file: the harness deletes its folder on stop, and the records written at stop count too.
    logDir = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-canary-"));
    logFile = path.join(logDir, "log.ndjson");
    proxy = await startTestProxy({ ...mode, logFile });
    // Proxy-Authorization on every CONNECT.
    agent = new ProxyAgent({ uri: proxy.url, requestTls: { ca: proxy.caPem }, token: `Bearer ${C.proxyAuth}` });
    const origin = `https://127.0.0.1:${up.httpsPort}`;
    const mcpUrl = `${origin}/mcp?api_key=${C.query}`;
    const credentialHeaders = {
      authorization: `Bearer ${C.bearer}`,
      cookie: `sid=${C.cookie}; theme=dark`,
      "x-api-key": C.apiKeyHeader,
      "Ocp-Apim-Subscription-Key": `${C.cloudHeaders}-1`,
      "X-Functions-Key": `${C.cloudHeaders}-2`,
      "X-Access-Key": `${C.cloudHeaders}-3`,
      Password: `${C.cloudHeaders}-4`,
      Authentication: `${C.cloudHeaders}-5`,
    };
    const rpc = async (body: unknown, extra: Record<string, string> = {}, url = mcpUrl) => {
      const res = await fetch(url, {
        method: "POST",
        dispatcher: agent,
        headers: {
          ...credentialHeaders,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...extra,
        },
        body: typeof body === "string" ? body : JSON.stringify(body),
      });
      await res.arrayBuffer();
      return res;
    };
    const session = { "mcp-session-id": "session-plain-1", "mcp-protocol-version": "2025-06-18" };

    // --- Streamable HTTP: initialize (clientInfo with a key), tools, SSE, batch, errors, invalid messages
    await rpc({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "canary-client", version: "1", apiKey: C.clientInfo, note: `key ${C.awsKey}` } },
    });
    await rpc({ jsonrpc: "2.0", method: "notifications/initialized" }, session);
    await rpc(
      {
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: {
          name: "login",
          arguments: { username: "alice", password: C.params, access_token: C.params, client_secret: C.params, nested: { apiKey: C.params, id_token: C.jwt } },
          _meta: { progressToken: "progress-1" },
        },
      },
      session,
    );
    // The client's answer to the server's sampling request.
    await rpc({ jsonrpc: "2.0", id: "srv-1", result: { role: "assistant", model: "m", content: { type: "text", text: "hi" }, _meta: { access_token: C.result } } }, session);
    await rpc(
      [
        { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "echo", arguments: { token: C.batch } } },
        { jsonrpc: "2.0", id: 4, method: "resources/read", params: { uri: "file:///x", password: C.batch } },
      ],
      session,
    );
    await rpc({ jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "fail", arguments: {} } }, session);
    await rpc({ jsonrpc: "2.0", id: 6, method: "tools/call", params: { name: "bad-result", arguments: {} } }, session);
    await rpc({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "broken-json", arguments: {} } }, session);
    await rpc({ jsonrpc: "2.0", id: 8, method: "tools/call", params: { name: "hang", arguments: {} } }, session);
    // Servers that quote the credentials back: in an error, in a result, in an invalid message.
    const members = { db_password: C.members, api_token: C.members, auth_token: C.members, secret_key: C.members, passphrase: C.members, pwd: C.members };
    for (const [i, name] of ["echo-credentials", "echo-result", "echo-invalid"].entries()) {
      await rpc({ jsonrpc: "2.0", id: 20 + i, method: "tools/call", params: { name, arguments: members } }, session,
        `${mcpUrl}&X-Amz-Security-Token=${C.presigned}-1&X-Amz-Signature=${C.presigned}-2&sig=${C.presigned}-3&jwt=${C.presigned}-4`);
    }
    // Other separators and other credential names: a server echoes the URL, the members are recorded.
    const widened = { hapikey: `${C.names}-1`, authkey: `${C.names}-2`, pass: `${C.names}-3`, pw: `${C.names}-4`, dsn: `${C.names}-5`, connection_string: `${C.names}-6`, connectionString: `${C.names}-7` };
    await rpc({ jsonrpc: "2.0", id: 23, method: "tools/call", params: { name: "echo-credentials", arguments: widened } }, session,
      `${origin}/mcp?v=1;api_key=${C.separators}-1;x=1&appid=${C.names}-8&sk=${C.names}-9&pat=${C.names}-10&hapikey=${C.names}-11`);
    // ... and a key under an ordinary name, found by its shape.
    await (await fetch(`${origin}/anything;api_key=${C.separators}-2;v=1?a=1;token=${C.separators}-3&q=${C.awsKey}`, { dispatcher: agent })).arrayBuffer();
    // A request body that is not JSON, with the credential in a member called password.
    await rpc(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"x","arguments":{"password":"${C.invalidJson}"}`, session);
    // A JSON-RPC message that is invalid (no jsonrpc member), with credentials in it.
    await rpc({ id: 10, method: "tools/call", params: { password: C.invalidMessage, client_secret: C.invalidMessage } }, session);

    // --- A query string full of credentials, and a 401 that echoes the bearer token in its challenge
    const query = await fetch(
      `${origin}/anything?access_token=${C.query}&code=${C.query}&key=${C.query}&client_secret=${C.query}&id_token=${C.jwt}&state=fine#access_token=${C.query}`,
      { dispatcher: agent, headers: credentialHeaders },
    );
    await query.arrayBuffer();
    const protectedRes = await fetch(`${origin}/protected`, { dispatcher: agent, headers: credentialHeaders });
    expect(protectedRes.status).toBe(401);
    await protectedRes.arrayBuffer();

    // --- OAuth: token requests (form and JSON), a failed refresh, a registration
    const form = new URLSearchParams({
      grant_type: "authorization_code",
      code: C.form,
      code_verifier: C.form,
      client_id: "public-client-id",
      client_secret: C.form,
      redirect_uri: "http://127.0.0.1:1/cb",
    });
    for (const [body, type] of [
      [form.toString(), "application/x-www-form-urlencoded"],
      [JSON.stringify({ grant_type: "client_credentials", client_id: "public-client-id", client_secret: C.form, client_assertion: C.jwt }), "application/json"],
      [new URLSearchParams({ grant_type: "refresh_token", refresh_token: C.form }).toString(), "application/x-www-form-urlencoded"],
    ] as const) {
      const res = await fetch(`${origin}/token`, {
        method: "POST",
        dispatcher: agent,
        headers: { "content-type": type, authorization: `Basic ${Buffer.from(`public-client-id:${C.form}`).toString("base64")}` },
        body,
      });
      await res.arrayBuffer();
    }
    const reg = await fetch(`${origin}/register`, {
      method: "POST",
      dispatcher: agent,
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ client_name: "canary client", redirect_uris: ["http://127.0.0.1:1/cb"], software_statement: C.jwt, client_secret: C.registration }),
    });
    await reg.arrayBuffer();

    // --- Legacy HTTP+SSE, with the credential in the GET URL and in the announced endpoint URL
    const stream = await fetch(`${origin}/sse?access_token=${C.legacy}`, {
      dispatcher: agent,
      headers: { accept: "text/event-stream", ...credentialHeaders },
    });
    const reader = stream.body!.getReader();
    let seen = "";
    while (!seen.includes("\n\n")) seen += Buffer.from((await reader.read()).value ?? []).toString();
    const endpoint = /data: (\S+)/.exec(seen)![1]!;
    const legacyUrl = `${origin}${endpoint}`;
    await rpc(
      { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2024-11-05", capabilities: {}, clientInfo: { name: "legacy", version: "1" } } },
      {},
      legacyUrl,
    );
    await rpc({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "t", arguments: { password: C.legacy } } }, {}, legacyUrl);
    for (;;) if ((await reader.read()).done) break;

    // --- Error paths: an upstream with an untrusted certificate (502), and one that refuses connections
    await rpc({ jsonrpc: "2.0", id: 11, method: "tools/call", params: { name: "t", arguments: { password: C.tlsFailure } } }, session,
      `https://127.0.0.1:${up.badTlsPort}/mcp?access_token=${C.tlsFailure}`);
    const refusedPort = await closedPort();
    const refusedRes = await rpc({ jsonrpc: "2.0", id: 12, method: "tools/call", params: { name: "t", arguments: { password: C.refusedConn } } }, session,
      `https://127.0.0.1:${refusedPort}/mcp?access_token=${C.refusedConn}`);
    expect(refusedRes.status).toBe(502);

    // --- Refused inside a tunnel: the Host header names another host; credentials ride in headers
    {
      const { socket } = await openTunnel(proxy, `127.0.0.1:${up.httpsPort}`);
      const tlsSocket = await tlsThroughTunnel(socket, "127.0.0.1", proxy.caPem);
      const res = await rawRequest(
        tlsSocket,
        `GET /mcp?access_token=${C.hostMismatch} HTTP/1.1\r\nHost: other.example:443\r\nAuthorization: Bearer ${C.hostMismatch}\r\n` +
          `Cookie: sid=${C.hostMismatch}\r\nConnection: close\r\n\r\n`,
      );
      expect(res.status).toBe(421);
    }

    // --- A plain-HTTP proxy request (absolute URI) with Proxy-Authorization and a query credential
    {
      const answer = await rawProxyExchange(
        proxy,
        `GET http://127.0.0.1:${up.httpPort}/plain?access_token=${C.plainProxy} HTTP/1.1\r\nHost: 127.0.0.1:${up.httpPort}\r\n` +
          `Proxy-Authorization: Basic ${Buffer.from(`u:${C.plainProxy}`).toString("base64")}\r\nAuthorization: Bearer ${C.plainProxy}\r\nConnection: close\r\n\r\n`,
      );
      expect(answer.toString("latin1")).toMatch(/^HTTP\/1\.1 200/);
    }

    // --- A WebSocket upgrade with the credential in its URL (and headers)
    {
      const { socket } = await openTunnel(proxy, `127.0.0.1:${up.httpsPort}`);
      const tlsSocket = await tlsThroughTunnel(socket, "127.0.0.1", proxy.caPem);
      const done = readAll(tlsSocket);
      tlsSocket.write(
        `GET /ws?access_token=${C.upgrade} HTTP/1.1\r\nHost: 127.0.0.1:${up.httpsPort}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer ${C.upgrade}\r\n\r\n`,
      );
      await done;
    }

    // --- A request the HTTP parser rejects (NUL in a header), its request line carrying a credential
    {
      const answer = await rawProxyExchange(
        proxy,
        `GET http://127.0.0.1:${up.httpPort}/x?access_token=${C.malformed} HTTP/1.1\r\nHost: 127.0.0.1:${up.httpPort}\r\n` +
          `X-Broken: a\u0000b\r\nAuthorization: Bearer ${C.malformed}\r\n\r\n`,
      );
      expect(answer.toString("latin1")).toMatch(/^HTTP\/1\.1 400/);
    }

    await proxy.waitForRecord((r) => r.event === "refused" && r.status === 400, { what: "refused record (malformed)" });
    await proxy.waitForRecord((r) => r.event === "websocket", { what: "websocket record" });
    await proxy.waitForRecords((r) => r.event === "auth", 5, { what: "auth records" });
    await proxy.waitForRecord((r) => r.event === "rpc" && r.kind === "unanswered", { what: "unanswered record" });
    // Stop the proxy: sessions end and whatever is still pending is reported, all of it in the log.
    await agent.close();
    await proxy.stop();
    logText = await readFile(logFile, "utf8");
    records = logText.split("\n").filter(Boolean).map((line) => JSON.parse(line) as LogRecord);
  });

  afterAll(async () => {
    await agent?.close().catch(() => undefined);
    await proxy?.stop();
    await up?.close();
    if (logDir) await rm(logDir, { recursive: true, force: true });
  });

  it("exercised every logging path (positive control)", () => {
    const events = new Set(records.map((r) => r.event));
    for (const e of ["start", "stop", "http", "rpc", "session", "auth", "refused", "websocket"]) expect(events, e).toContain(e);
    const kinds = new Set(records.filter((r) => r.event === "rpc").map((r) => r.kind));
    for (const k of ["request", "notification", "response", "error", "invalid", "unanswered"]) expect(kinds, k).toContain(k);
    expect(records.some((r) => r.event === "rpc" && r.transport === "http+sse")).toBe(true);
    expect(records.some((r) => r.event === "rpc" && r.batch !== undefined)).toBe(true);
    expect(records.some((r) => r.event === "rpc" && r.sseEventId !== undefined)).toBe(true);
    expect(records.some((r) => r.event === "http" && (r.error as { code?: string } | undefined)?.code === "upstream_tls")).toBe(true);
    expect(records.some((r) => r.event === "http" && (r.error as { code?: string } | undefined)?.code === "upstream_connect")).toBe(true);
    expect(records.some((r) => r.event === "http" && r.mode === "plain-proxy")).toBe(true);
    expect(records.filter((r) => r.event === "auth").map((r) => r.step).sort()).toEqual(
      ["challenge", "registration", "token", "token", "token"].sort(),
    );
    // Redaction, not absence: the positions are there, with the marker.
    expect(logText).toContain("[redacted]");
    expectRecordsMatchSchemas(records, "start", "stop", "http", "rpc", "session", "auth", "refused", "websocket");
  });

  const expectAbsent = (canary: string): void => {
    expect(logText.length).toBeGreaterThan(0);
    const at = logText.indexOf(canary);
    expect(at, at < 0 ? "" : `leak: …${logText.slice(Math.max(0, at - 300), at + 60)}…`).toBe(-1);
    // Not even its random part on its own.
    expect(logText).not.toContain(canary.split("-").at(-1)!);
  };

  it.each(Object.entries(C))("the %s canary appears nowhere in the log", (_name, canary) => expectAbsent(canary));
});

describe("no proxy credential reaches the log (--proxy-auth)", () => {
  it("keeps the configured password and the wrong and right Proxy-Authorization out of every record", async () => {
    const configured = `canary-proxypass-${rand()}`;
    const wrong = `canary-wrongpass-${rand()}`;
    const up = await startUpstreams();
    const logDir = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-canary-"));
    const logFile = path.join(logDir, "log.ndjson");
    const proxy = await startTestProxy({ logFile, proxyAuth: `wiretap:${configured}` });
    try {
      const basic = (password: string) => `Basic ${Buffer.from(`wiretap:${password}`).toString("base64")}`;
      const refused = await rawProxyExchange(
        proxy,
        `CONNECT 127.0.0.1:${up.httpsPort} HTTP/1.1\r\nHost: 127.0.0.1:${up.httpsPort}\r\nProxy-Authorization: ${basic(wrong)}\r\n\r\n`,
      );
      expect(refused.toString("latin1")).toMatch(/^HTTP\/1\.1 407/);
      const plainWrong = await rawProxyExchange(
        proxy,
        `GET http://127.0.0.1:${up.httpPort}/plain HTTP/1.1\r\nHost: 127.0.0.1:${up.httpPort}\r\nProxy-Authorization: ${basic(wrong)}\r\nConnection: close\r\n\r\n`,
      );
      expect(plainWrong.toString("latin1")).toMatch(/^HTTP\/1\.1 407/);
      const agent = new ProxyAgent({ uri: proxy.url, requestTls: { ca: proxy.caPem }, token: basic(configured) });
      const ok = await fetch(`https://127.0.0.1:${up.httpsPort}/anything`, { dispatcher: agent });
      expect(ok.status).toBe(200);
      await ok.arrayBuffer();
      await agent.close();
      await proxy.waitForRecords((r) => r.event === "refused" && r.status === 407, 2, { what: "refused 407 records" });
      await proxy.waitForRecord((r) => r.event === "http", { what: "http record" });
      await proxy.stop();
      const text = await readFile(logFile, "utf8");
      for (const canary of [configured, wrong]) {
        expect(text).not.toContain(canary);
        expect(text).not.toContain(Buffer.from(`wiretap:${canary}`).toString("base64"));
      }
    } finally {
      await proxy.stop();
      await up.close();
      await rm(logDir, { recursive: true, force: true });
    }
  });
});
