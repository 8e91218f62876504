/**
 * The replay endpoint's bounds, on a real UI server and a real loopback server that holds every request
 * until the test lets it go: a body over 1 MiB is refused unread, a fourth replay while three wait is refused
 * at once, and a header typed for a replay is never said back (not even when the server quotes it).
 */
import { mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RecordHistory } from "../../../src/ui/server/record-history.js";
import { createLogSink, type LogSink } from "../../../src/log/logger.js";
import { MAX_CONCURRENT_REPLAYS, MAX_REPLAY_BODY_BYTES, replayActions, runningLogStream } from "../../../src/ui/server/replay-actions.js";
import { startUiServer, type RunningUi } from "../../../src/ui/server/ui-server.js";
import { openUi, type UiSession } from "../../intercept/ui-client.js";
import { waitUntil } from "../../helpers/wait-until.js";

const FLOW = "0b7e3c52-replay-actions-test";
let tmp: string;
let held: { res: http.ServerResponse; authorization: string }[] = [];
let server: http.Server;
let ui: RunningUi;
let api: UiSession;
let sink: LogSink;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-replay-actions-"));
  server = http.createServer((req, res) => {
    req.resume();
    held.push({ res, authorization: req.headers.authorization ?? "" });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  const history = new RecordHistory();
  // A capture of one echo call to that server over plain HTTP (its http record has no TLS).
  const base = { level: "info", time: "2026-11-28T07:00:00.000Z", flow: FLOW, transport: "streamable-http", server: host, path: "/mcp", session: "s1", protocolVersion: "2025-11-25" };
  for (const r of [
    { ...base, event: "http", method: "POST", status: 200 },
    { ...base, event: "rpc", direction: "client_to_server", kind: "request", id: 1, method: "tools/call", tool: "echo", params: { name: "echo", arguments: { message: "hi" } } },
    // The server's listing: echo reads only, wipe destroys.
    { ...base, event: "rpc", direction: "server_to_client", kind: "response", id: 0, method: "tools/list", result: { tools: [{ name: "echo", inputSchema: { type: "object" }, annotations: { readOnlyHint: true } }, { name: "wipe", inputSchema: { type: "object" }, annotations: { destructiveHint: true } }] } },
  ]) {
    history.append(JSON.stringify(r));
  }
  sink = createLogSink({ file: path.join(tmp, "replays.ndjson") });
  const replay = replayActions(history, { proxy: { caDir: path.join(tmp, "ca"), upstreamCa: [], insecureUpstream: false }, records: runningLogStream((line) => sink.writeLine(line)), timeoutMs: 30_000 });
  ui = await startUiServer({ port: 0, history, source: { kind: "files", follow: false, description: "test" }, replay });
  api = await openUi(ui.url);
}, 30_000);

afterAll(async () => {
  for (const { res } of held) res.destroy();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await ui?.close();
  await sink?.flush();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

function post(body: string, action = "replay"): Promise<{ status: number; text: string }> {
  return fetch(`${api.base}/api/action/${action}`, {
    method: "POST",
    headers: { cookie: api.cookie, origin: api.base, "content-type": "application/json", "x-wiretap-token": api.token, "x-wiretap-nonce": api.nonce },
    body,
  }).then(async (res) => ({ status: res.status, text: await res.text() }));
}

/** A POST on a connection of its own: the server closes a connection whose body it did not read. */
function postOnOwnConnection(body: string): Promise<number> {
  const { port } = new URL(api.base);
  const headers = { cookie: api.cookie, origin: api.base, "content-type": "application/json", "x-wiretap-token": api.token, "x-wiretap-nonce": api.nonce };
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port: Number(port), method: "POST", path: "/api/action/replay", headers, agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    // The server answers before it has read everything: the rest of the body may meet a closed socket.
    req.on("error", (err: NodeJS.ErrnoException) => (err.code === "EPIPE" || err.code === "ECONNRESET" ? undefined : reject(err)));
    req.end(body);
  });
}

describe("replay endpoint bounds", () => {
  it("refuses a body over the bound, unread", async () => {
    const big = JSON.stringify({ call: `${FLOW}#1`, params: { name: "echo", arguments: { message: "x".repeat(MAX_REPLAY_BODY_BYTES) } }, confirmed: true });
    expect(await postOnOwnConnection(big)).toBe(413);
    expect(held).toHaveLength(0);
  });

  it("runs three replays at once and refuses a fourth meanwhile; a typed header is never said back", async () => {
    const secret = "Bearer s3cr3t-typed-for-one-replay";
    const body = JSON.stringify({ call: `${FLOW}#1`, header: `Authorization: ${secret}`, confirmed: true });
    const waiting = Array.from({ length: MAX_CONCURRENT_REPLAYS }, () => post(body));
    // Each replay's initialize is held by the server: three replays in flight.
    await waitUntil(() => held.length === MAX_CONCURRENT_REPLAYS, { timeoutMs: 20_000, what: "three replays at the server" });
    const fourth = await post(body);
    expect(fourth.status).toBe(429);
    expect(fourth.text).toContain(`${MAX_CONCURRENT_REPLAYS} replays are running`);
    // The server quotes the credential it was sent in its answer (some do): the page is not told it.
    for (const { res, authorization } of held.splice(0)) {
      expect(authorization).toBe(secret);
      res.writeHead(500, { "content-type": "text/plain" });
      res.end(`refused: ${authorization}`);
    }
    const answers = await Promise.all(waiting);
    for (const a of answers) {
      expect(a.status).toBe(502);
      expect(a.text).not.toContain("s3cr3t");
    }
  });

  it("an edit naming another tool is confirmed as that tool: Edit and replay of a read-only tool does not run a destructive one unasked", async () => {
    const captured = JSON.parse((await post(JSON.stringify({ call: `${FLOW}#1` }), "replay-check")).text) as { confirm: unknown };
    expect(captured.confirm).toBeNull();
    const edited = { name: "wipe", arguments: {} };
    const check = await post(JSON.stringify({ call: `${FLOW}#1`, params: edited }), "replay-check");
    expect(check.status).toBe(200);
    expect(JSON.parse(check.text)).toMatchObject({ tool: "wipe", confirm: { tool: "wipe", destructive: true } });
    // Unconfirmed, it is refused before anything reaches the server (which would hold it).
    const sent = await Promise.race([post(JSON.stringify({ call: `${FLOW}#1`, params: edited })), waitUntil(() => held.length > 0, { timeoutMs: 20_000 }).then(() => null)]);
    expect(held).toHaveLength(0);
    expect(sent?.status).toBe(409);
    expect(JSON.parse(sent!.text)).toMatchObject({ confirm: { tool: "wipe", destructive: true } });
  });

  it("a typed header is not said back when the server quotes only its credential (the token without its scheme)", async () => {
    const token = "tok3n-typed-for-one-replay-only";
    const answer = post(JSON.stringify({ call: `${FLOW}#1`, header: `Authorization: Bearer ${token}`, confirmed: true }));
    await waitUntil(() => held.length === 1, { timeoutMs: 20_000, what: "the replay at the server" });
    const { res } = held.splice(0)[0]!;
    res.writeHead(500, { "content-type": "text/plain" });
    res.end(`invalid token ${token}`);
    const a = await answer;
    expect(a.status).toBe(502);
    expect(a.text).toContain("invalid token");
    expect(a.text).not.toContain(token);
  });
});

describe("looking up the call to replay", () => {
  it("a replay is judged by the server's tool list as it is when sent, not as an earlier check saw it", async () => {
    const history = new RecordHistory();
    const base = { level: "info", time: "2026-11-28T07:00:00.000Z", transport: "streamable-http", server: "127.0.0.1:9", path: "/mcp", session: "s1" };
    const listing = (annotations: object, id: number) => ({ ...base, flow: FLOW, event: "rpc", direction: "server_to_client", kind: "response", id, method: "tools/list", result: { tools: [{ name: "echo", inputSchema: { type: "object" }, annotations }] } });
    history.append(JSON.stringify({ ...base, flow: FLOW, event: "rpc", direction: "client_to_server", kind: "request", id: 1, method: "tools/call", tool: "echo", params: { name: "echo", arguments: {} } }));
    history.append(JSON.stringify(listing({ readOnlyHint: true }, 0)));
    const replay = replayActions(history, { proxy: { caDir: "unused", upstreamCa: [], insecureUpstream: false }, records: runningLogStream(() => undefined), timeoutMs: 1_000 });
    expect((await replay.handle("replay-check", JSON.stringify({ call: `${FLOW}#1` }))).body).toMatchObject({ ok: true, confirm: null });
    // The server lists echo again, no longer read-only (a changed definition): the replay asks first.
    history.append(JSON.stringify(listing({ destructiveHint: true }, 2)));
    const answer = await replay.handle("replay", JSON.stringify({ call: `${FLOW}#1` }));
    expect(answer.status).toBe(409);
    expect(answer.body).toMatchObject({ confirm: { tool: "echo", destructive: true } });
  });

  it("lets the proxy's event loop turn while it reads a server's many records", async () => {
    // The history of a running proxy: a server with many records (a hostile one can make them large).
    const history = new RecordHistory();
    const base = { level: "info", time: "2026-11-28T07:00:00.000Z", transport: "streamable-http", server: "127.0.0.1:9", path: "/mcp", session: "s1" };
    history.append(JSON.stringify({ ...base, flow: FLOW, event: "rpc", direction: "client_to_server", kind: "request", id: 1, method: "tools/call", tool: "echo", params: { name: "echo", arguments: {} } }));
    const text = "x".repeat(2_000);
    for (let i = 0; i < 6_000; i++) history.append(JSON.stringify({ ...base, flow: `other-${i}`, event: "rpc", direction: "server_to_client", kind: "response", id: i, result: { content: [{ type: "text", text }] } }));
    const replay = replayActions(history, { proxy: { caDir: "unused", upstreamCa: [], insecureUpstream: false }, records: runningLogStream(() => undefined), timeoutMs: 1_000 });
    let turns = 0;
    const timer = setInterval(() => turns++, 0);
    try {
      const answer = await replay.handle("replay-check", JSON.stringify({ call: `${FLOW}#1` }));
      expect(answer.body).toMatchObject({ ok: true, tool: "echo" });
    } finally {
      clearInterval(timer);
    }
    // Read in one piece, the proxy's timers (its exchanges, its feeds) would all wait for the lookup's end.
    expect(turns).toBeGreaterThan(2);
  });

  it("refuses, pointing at the CLI, a call whose records pass what a lookup parses (a server flooding its answer stream)", async () => {
    const history = new RecordHistory();
    const base = { level: "info", time: "2026-11-28T07:00:00.000Z", transport: "streamable-http", server: "127.0.0.1:9", path: "/mcp", session: "s1", flow: FLOW };
    history.append(JSON.stringify({ ...base, event: "rpc", direction: "client_to_server", kind: "request", id: 1, method: "tools/call", tool: "echo", params: { name: "echo", arguments: {} } }));
    for (let i = 0; i < 20_000; i++) history.append(JSON.stringify({ ...base, event: "rpc", direction: "server_to_client", kind: "notification", method: "notifications/progress", params: { progress: i } }));
    const replay = replayActions(history, { proxy: { caDir: "unused", upstreamCa: [], insecureUpstream: false }, records: runningLogStream(() => undefined), timeoutMs: 1_000 });
    const answer = await replay.handle("replay-check", JSON.stringify({ call: `${FLOW}#1` }));
    expect(answer.status).toBe(422);
    expect(answer.body).toMatchObject({ ok: false, error: expect.stringContaining("mcp-wiretap replay LOG --call") });
  });
});
