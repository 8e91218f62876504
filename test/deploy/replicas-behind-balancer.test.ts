/**
 * The shipped deployment without containers: Debian's HAProxy runs deploy/haproxy.cfg (only the container
 * names and ports turned into loopback addresses) in front of two mcp-wiretap replicas that share one CA,
 * one policy and one redis-server, as deploy/docker-compose.yml wires them. Clients know one address.
 */
import net from "node:net";
import { ProxyAgent, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CliProxy } from "../helpers/cli-proxy.js";
import { connectStreamable } from "../helpers/mcp-client.js";
import type { McpUpstream } from "../helpers/mcp-upstream.js";
import type { LogRecord } from "../helpers/proxy-harness.js";
import { sharedLimitPolicy } from "../state/redis-harness.js";
import { balancerTestsMissing, CREDENTIALS, startBalancedReplicas, type BalancedReplicas } from "./haproxy-harness.js";

const missing = balancerTestsMissing("test/deploy/replicas-behind-balancer.test.ts");

async function poll(predicate: () => boolean | Promise<boolean>, timeoutMs: number, what: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe.skipIf(missing !== null)("two replicas behind deploy/haproxy.cfg, sharing state in Redis", () => {
  let replicas: BalancedReplicas;
  let upstream: McpUpstream;
  let a: CliProxy;
  let b: CliProxy;
  let front: number;
  let caPem: string;
  const haproxyOut = (): string => replicas.haproxyOutput();
  /** The replica the balancer ties this test's client address to. */
  let affine: "a" | "b" = "a";

  beforeAll(async () => {
    replicas = await startBalancedReplicas(sharedLimitPolicy("five-calls-balanced"));
    ({ upstream, a, b, front, caPem } = replicas);
  }, 60_000);

  afterAll(async () => {
    await replicas?.stop();
  });

  /** Each server's status as HAProxy's health checks have it (`show stat` on its stats socket). */
  async function serverStatus(): Promise<Record<string, string>> {
    const csv = await new Promise<string>((resolve, reject) => {
      let out = "";
      const s = net.connect(replicas.statsSocket, () => s.end("show stat\n"));
      s.on("data", (c: Buffer) => (out += c.toString()));
      s.once("end", () => resolve(out));
      s.once("error", reject);
    });
    const [header, ...rows] = csv.replace(/^# /, "").trim().split("\n").map((l) => l.split(","));
    const col = (name: string): number => header!.indexOf(name);
    return Object.fromEntries(rows.filter((r) => r[col("pxname")] === "wiretap" && ["a", "b"].includes(r[col("svname")]!)).map((r) => [r[col("svname")]!, r[col("status")]!]));
  }

  const proxyUrl = (): string => `http://${CREDENTIALS}@127.0.0.1:${front}`;

  /** One session through the balancer's address: one CONNECT tunnel, to whichever replica HAProxy picks. */
  async function call(): Promise<{ session: string; text: string | null; error: string | null }> {
    const connected = await connectStreamable(upstream.streamableUrl, { proxyUrl: proxyUrl(), caPem });
    const session = connected.transport.sessionId!;
    try {
      const result = await connected.client.callTool({ name: "echo", arguments: { message: "hi" } });
      const content = (result.content as { type: string; text?: string }[] | undefined) ?? [];
      return { session, text: content[0]?.text ?? null, error: null };
    } catch (err) {
      return { session, text: null, error: err instanceof Error ? err.message : String(err) };
    } finally {
      await connected.close();
    }
  }

  async function callRecord(session: string): Promise<{ replica: "a" | "b"; record: LogRecord }> {
    const match = (r: LogRecord): boolean => r.event === "rpc" && r.kind === "request" && r.method === "tools/call" && r.session === session;
    let found: { replica: "a" | "b"; record: LogRecord } | null = null;
    await poll(
      async () => {
        for (const [name, replica] of [["a", a], ["b", b]] as const) {
          const record = (await replica.records()).find(match);
          if (record) found = { replica: name, record };
        }
        return found !== null;
      },
      10_000,
      () => `the tools/call record of session ${session} in either replica's log`,
    );
    return found!;
  }

  /** The `tools/call` request records of a session, and the replica whose log holds them. */
  async function sessionCalls(session: string, count: number): Promise<{ replica: "a" | "b"; records: LogRecord[] }> {
    let found: { replica: "a" | "b"; records: LogRecord[] } | null = null;
    await poll(
      async () => {
        for (const [name, replica] of [["a", a], ["b", b]] as const) {
          const records = (await replica.records()).filter((r) => r.event === "rpc" && r.kind === "request" && r.method === "tools/call" && r.session === session);
          if (records.length >= count) found = { replica: name, records };
        }
        return found !== null;
      },
      10_000,
      () => `${count} tools/call records of session ${session} in either replica's log`,
    );
    return found!;
  }

  /**
   * One MCP session on a tunnel of its own (initialize, initialized, one tools/call, then the connection
   * closed): each call is one new connection to the balancer, which sends every connection of this client
   * address to one replica (client affinity).
   */
  async function callOnNewTunnel(message: string, via = proxyUrl()): Promise<{ session: string; answer: { result?: unknown; error?: { message: string } } }> {
    const dispatcher = new ProxyAgent({ uri: via, requestTls: { ca: caPem } });
    const post = async (body: unknown, session?: string): Promise<{ session: string | undefined; json: unknown }> => {
      const res = await request(`${upstream.streamableUrl}`, {
        dispatcher,
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18", ...(session ? { "mcp-session-id": session } : {}) },
        body: JSON.stringify(body),
      });
      const text = await res.body.text();
      const data = text.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6));
      const json = text.trim() === "" ? null : JSON.parse(data.length > 0 ? data.at(-1)! : text);
      return { session: res.headers["mcp-session-id"] as string | undefined, json };
    };
    try {
      const init = await post({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "balancer-test", version: "1" } } });
      const session = init.session!;
      await post({ jsonrpc: "2.0", method: "notifications/initialized" }, session);
      const call = await post({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "echo", arguments: { message } } }, session);
      return { session, answer: call.json as { result?: unknown; error?: { message: string } } };
    } finally {
      await dispatcher.destroy();
    }
  }

  it("both replicas pass the health check; through the one address the 6th tools/call in the minute is denied, on either replica", async () => {
    // HAProxy's own checks (GET /healthz on each replica) have both up.
    await poll(async () => Object.values(await serverStatus()).filter((st) => st === "UP").length === 2, 10_000, () => `both servers UP in HAProxy's stats; HAProxy said:\n${haproxyOut().slice(-2000)}`);
    const served: ("a" | "b")[] = [];
    for (let i = 0; i < 5; i++) {
      const { session, answer } = await callOnNewTunnel(`hi ${i}`);
      expect(JSON.stringify(answer.result)).toContain(`hi ${i}`);
      const { replica, record } = await callRecord(session);
      expect(record.decision).toMatchObject({ action: "allow" });
      served.push(replica);
    }
    const sixth = await callOnNewTunnel("six");
    expect(sixth.answer.error?.message).toMatch(/blocked by mcp-wiretap policy/);
    const { record } = await callRecord(sixth.session);
    expect(record.decision).toMatchObject({ action: "deny", enforced: true, rules: [{ name: "five-calls-balanced", reason: "over 5 per minute (per global)" }] });
    // Client affinity: every tunnel of this client address went to one replica.
    expect(new Set(served).size, `replicas that served the 5 calls: ${served.join(", ")}`).toBe(1);
    affine = served[0]!;
    // Whichever replica a client reaches, the count is the shared one: each replica, asked directly, denies too.
    for (const [name, replica] of [["a", a], ["b", b]] as const) {
      const direct = await callOnNewTunnel(`direct to ${name}`, `http://${CREDENTIALS}@127.0.0.1:${replica.port}`);
      expect(direct.answer.error?.message, `${name} (the balancer had sent the 5 allowed calls to ${served.join(", ")})`).toMatch(/blocked by mcp-wiretap policy/);
      expect((await callRecord(direct.session)).replica).toBe(name);
    }
  }, 90_000);

  it("a replica that stops costs no session: its connections are redispatched at once, then the health check takes it out", async () => {
    // The replica this client is tied to stops.
    const [stopped, other] = affine === "a" ? [a, "b"] : [b, "a"];
    await stopped.dispose();
    // Right after the stop HAProxy still counts it UP (its checks need a few seconds to notice), and the
    // client's hash sends the next new tunnel there: `retries` + `option redispatch` in deploy/haproxy.cfg move
    // a refused connection to the other at once, so no client sees the dead replica.
    const sessions: string[] = [];
    const failures: string[] = [];
    for (let i = 0; i < 4; i++) {
      const result = await call().catch((err: unknown) => ({ session: "", text: null, error: String(err) }));
      if (result.session) sessions.push(result.session);
      else failures.push(result.error ?? "no session");
    }
    expect(failures, `sessions through the balancer after replica ${affine} stopped; HAProxy said:\n${haproxyOut().slice(-2000)}`).toEqual([]);
    // The limit is spent (previous test): the other replica denies, from the shared counters.
    const { replica, record } = await callRecord(sessions.at(-1)!);
    expect(replica).toBe(other);
    expect(record.decision).toMatchObject({ action: "deny", enforced: true });
  }, 60_000);
});
