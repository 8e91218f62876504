/**
 * One client's connections spread over two replicas. A legacy HTTP+SSE client holds its GET stream on one
 * tunnel and POSTs on others; a Streamable HTTP client's standalone GET stream carries the server's requests
 * and its answers go out as POSTs. A replica that sees only one half of a call cannot pair the answer with
 * its request: measured here with the halves sent to each replica by hand, and then through
 * deploy/haproxy.cfg, whose client affinity keeps every tunnel of a client on one replica.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { FetchLike, Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { ProxyAgent, type Dispatcher } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CliProxy } from "../helpers/cli-proxy.js";
import { fetchVia } from "../helpers/mcp-client.js";
import type { McpUpstream } from "../helpers/mcp-upstream.js";
import { runCli, type LogRecord } from "../helpers/proxy-harness.js";
import { balancerTestsMissing, CREDENTIALS, startBalancedReplicas, type BalancedReplicas } from "./haproxy-harness.js";

const missing = balancerTestsMissing("test/deploy/cross-replica-pairing.test.ts");

const POLICY = `mode: enforce
detectors: { secrets: off, pii: off, hiddenText: off, poisoning: off, toolPinning: flag, schema: off }
rules:
  - name: no-echo-results
    action: deny
    reason: echo results stay out
    match: { tool: echo, kind: response }
`;

async function poll<T>(find: () => Promise<T | undefined>, what: string, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await find();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.skipIf(missing !== null)("a client's connections over two replicas on one Redis", () => {
  let replicas: BalancedReplicas;
  let upstream: McpUpstream;
  let a: CliProxy;
  let b: CliProxy;
  let front: number;
  let caPem: string;
  const dispatchers: Dispatcher[] = [];

  beforeAll(async () => {
    replicas = await startBalancedReplicas(POLICY);
    ({ upstream, a, b, front, caPem } = replicas);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(dispatchers.map((d) => d.destroy().catch(() => undefined)));
    await replicas?.stop();
  });

  function via(port: number): Dispatcher {
    const d = new ProxyAgent({ uri: `http://${CREDENTIALS}@127.0.0.1:${port}`, requestTls: { ca: caPem } });
    dispatchers.push(d);
    return d;
  }

  /** GETs (the SSE streams) through one address, everything else through another. */
  function split(gets: Dispatcher, posts: Dispatcher): FetchLike {
    const get = fetchVia(gets);
    const post = fetchVia(posts);
    return (url, init) => ((init?.method ?? "GET") === "GET" ? get(url, init) : post(url, init));
  }

  async function connect(transport: Transport): Promise<Client> {
    const client = new Client({ name: "pairing-test", version: "1" }, { capabilities: { roots: { listChanged: true } } });
    client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: "file:///work", name: "work" }] }));
    await client.connect(transport);
    return client;
  }

  /**
   * Waits for `find`. The server asks for roots 350 ms after `initialized`, on the standalone GET stream:
   * a request sent before that stream is open waits in the server's event store, so the client says its
   * roots changed, and the server asks again.
   */
  async function afterRootsAsked(client: Client, find: () => Promise<LogRecord | undefined>, what: string): Promise<LogRecord> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const found = await poll(find, what, 2_000).catch(() => undefined);
      if (found) return found;
      await client.sendRootsListChanged();
    }
    throw new Error(`timed out waiting for ${what}`);
  }

  /** The echo call's outcome as the client saw it. */
  async function echo(client: Client, message: string): Promise<string> {
    return client.callTool({ name: "echo", arguments: { message } }).then(
      (r) => JSON.stringify(r.content),
      (err: Error) => `error: ${err.message}`,
    );
  }

  it("split by hand (SSE GET stream on A, POSTs on B): the echo answer is recorded on A without method, tool or latency, and the rule denying echo results does not see it", async () => {
    const transport = new SSEClientTransport(new URL(upstream.sseUrl), { fetch: split(via(a.port), via(b.port)) });
    const client = await connect(transport);
    try {
      expect(await echo(client, "split sse")).toContain("Echo: split sse");
    } finally {
      await client.close();
    }
    const call = await poll(async () => (await b.records()).find((r) => r.event === "rpc" && r.method === "tools/call" && r.kind === "request"), "the call on B");
    const answer = await poll(async () => (await a.records()).find((r) => r.event === "rpc" && r.kind === "response" && r.transport === "http+sse" && r.id === call.id), "the answer on A");
    expect(answer.method ?? null).toBeNull();
    expect(answer.tool ?? null).toBeNull();
    expect(answer.latencyMs).toBeUndefined();
    expect(answer.decision).toMatchObject({ action: "allow" });
    expect(answer.reason).toMatch(/no pending request with this id/);
    // B saw POSTs without their stream: it takes them for Streamable HTTP, and the call for unanswered.
    expect(call).toMatchObject({ transport: "streamable-http", session: null });
  });

  it("split by hand (Streamable HTTP standalone GET on A, POSTs on B): the client's answer to the server's roots/list is recorded on B without method or latency", async () => {
    const transport = new StreamableHTTPClientTransport(new URL(upstream.streamableUrl), { fetch: split(via(a.port), via(b.port)) });
    const client = await connect(transport);
    try {
      const request = await afterRootsAsked(client, async () => (await a.records()).find((r) => r.event === "rpc" && r.method === "roots/list" && r.kind === "request" && r.session === transport.sessionId), "roots/list on A's GET stream");
      const answer = await poll(async () => (await b.records()).find((r) => r.event === "rpc" && r.kind === "response" && r.direction === "client_to_server" && r.session === transport.sessionId && r.id === request.id), "the client's answer on B");
      expect(answer.method ?? null).toBeNull();
      expect(answer.latencyMs).toBeUndefined();
    } finally {
      await transport.terminateSession().catch(() => undefined);
      await client.close();
    }
  });

  it("through deploy/haproxy.cfg (client affinity), every answer is paired on one replica and the echo result is denied", async () => {
    const balancer = via(front);
    const sse = new SSEClientTransport(new URL(upstream.sseUrl), { fetch: fetchVia(balancer) });
    const streamable = new StreamableHTTPClientTransport(new URL(upstream.streamableUrl), { fetch: fetchVia(balancer) });
    const [sseClient, streamableClient] = await Promise.all([connect(sse), connect(streamable)]);
    try {
      for (const client of [sseClient, streamableClient]) expect(await echo(client, "balanced")).toMatch(/^error: .*blocked by mcp-wiretap policy/);
      const records = async (): Promise<LogRecord[]> => [...(await a.records()), ...(await b.records())];
      const answers = await poll(async () => {
        const found = (await records()).filter((r) => r.event === "rpc" && r.kind === "response" && r.tool === "echo");
        return found.length >= 2 ? found : undefined;
      }, "both echo answers, paired");
      for (const answer of answers) {
        expect(answer).toMatchObject({ method: "tools/call", decision: { action: "deny", enforced: true, rules: [{ name: "no-echo-results" }] } });
        expect(typeof answer.latencyMs).toBe("number");
      }
      const rootsAnswer = await afterRootsAsked(streamableClient, async () => (await records()).find((r) => r.event === "rpc" && r.kind === "response" && r.direction === "client_to_server" && r.session === streamable.sessionId), "the answer to roots/list");
      expect(rootsAnswer).toMatchObject({ method: "roots/list" });
      expect(typeof rootsAnswer.latencyMs).toBe("number");
      // Nothing of either session was recorded without its method.
      const sessions = answers.map((r) => String(r.session));
      expect((await records()).filter((r) => r.event === "rpc" && r.kind === "response" && r.method == null && sessions.includes(String(r.session)))).toEqual([]);
      // `stats` over both replicas' logs counts the two calls once each, denied, with their latency.
      const stats = await runCli(["stats", "--json", "--tool", "echo", "--session", sessions.join(","), a.logFile, b.logFile]);
      expect(stats.code, stats.stderr).toBe(0);
      const totals = (JSON.parse(stats.stdout) as { totals: { calls: number; denied: number; unanswered: number; latencyMs: { count: number } } }).totals;
      expect(totals).toMatchObject({ calls: 2, denied: 2, unanswered: 0, latencyMs: { count: 2 } });
    } finally {
      await streamable.terminateSession().catch(() => undefined);
      await Promise.all([sseClient.close(), streamableClient.close()]);
    }
  });
});
