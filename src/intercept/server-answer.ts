import http from "node:http";
import https from "node:https";
import net from "node:net";
import type { IncomingHttpHeaders } from "node:http";
import type { McpFlow } from "../mcp/flow.js";
import { isEnforcedDeny } from "../mcp/replies.js";
import type { MessageHandler } from "../mcp/tracker.js";
import { upstreamContext } from "../proxy/upstream-context.js";

/** How long the proxy's answer to a server may take, connection included. */
export const SERVER_ANSWER_TIMEOUT_MS = 5_000;
/** Answers in flight to one server at once: one that floods requests to be dropped gets the rest unanswered. */
export const MAX_SERVER_ANSWERS_PER_SERVER = 4;
/** Answers in flight at once, to all servers (a client may name many). */
export const MAX_SERVER_ANSWERS = 64;

export interface ServerAnswerOptions {
  upstreamCa: readonly string[];
  insecureUpstream: boolean;
  timeoutMs?: number;
  maxPerServer?: number;
}

/** Headers of the client's exchange that are about that exchange's own body or connection, not the client. */
const NOT_CARRIED = new Set([
  "host",
  "content-length",
  "content-type",
  "content-encoding",
  "transfer-encoding",
  "accept",
  "accept-encoding",
  "connection",
  "keep-alive",
  "upgrade",
  "te",
  "trailer",
  "expect",
  "last-event-id",
  "proxy-authorization",
  "proxy-connection",
  // What the client's own message was (the 2026-07-28 revision's routing headers): not this answer.
  "mcp-method",
  "mcp-name",
]);
const NOT_CARRIED_PREFIX = "mcp-param-";

interface Target {
  secure: boolean;
  host: string;
  port: number;
  path: string;
}

/**
 * A request a server sent on an event stream and `--intercept` dropped: the proxy answers it as the client would,
 * with a POST of the error to the endpoint the stream belongs to (Streamable HTTP: the stream's own URL; legacy
 * HTTP+SSE: the session's endpoint), carrying the client's headers of that exchange for this POST only. The
 * answer is judged and recorded (`proxyAnswer`) before it goes out; what fails is reported, never thrown.
 */
export class ServerAnswers {
  private readonly inFlight = new Map<string, number>();
  private total = 0;
  private readonly timeoutMs: number;
  private readonly maxPerServer: number;

  constructor(private readonly o: ServerAnswerOptions) {
    this.timeoutMs = o.timeoutMs ?? SERVER_ANSWER_TIMEOUT_MS;
    this.maxPerServer = o.maxPerServer ?? MAX_SERVER_ANSWERS_PER_SERVER;
  }

  /**
   * Sends `answer` (one JSON-RPC error) to the server of `flow`; `failed` hears why it did not reach it. Never
   * rejects: it runs detached from the stream it came from (and may end after the proxy stopped).
   */
  async send(pipeline: MessageHandler, flow: McpFlow, answer: Record<string, unknown>, failed: (reason: string) => void): Promise<void> {
    const problem = await this.attempt(pipeline, flow, answer).catch((err: unknown) => `the proxy's answer did not reach the server: ${err instanceof Error ? err.message : String(err)}`);
    if (problem === null) return;
    try {
      failed(problem);
    } catch {
      // The log is closed (the proxy stopped): nothing is left to tell.
    }
  }

  private async attempt(pipeline: MessageHandler, flow: McpFlow, answer: Record<string, unknown>): Promise<string | null> {
    const target = targetOf(flow);
    if (typeof target === "string") return target;
    const busy = this.inFlight.get(flow.server) ?? 0;
    if (busy >= this.maxPerServer) return `not answered: ${busy} answers of the proxy to this server already in flight`;
    if (this.total >= MAX_SERVER_ANSWERS) return `not answered: ${this.total} answers of the proxy already in flight`;
    this.inFlight.set(flow.server, busy + 1);
    this.total += 1;
    try {
      const body = Buffer.from(JSON.stringify(answer));
      const judged = await pipeline.message(flow.context("client_to_server", { proxyAnswer: true }), answer, body.length);
      if (isEnforcedDeny(judged)) return "not answered: the policy denies the proxy's answer";
      const status = await this.post(target, headersOf(flow.ex.request.headers, target), body);
      return status >= 400 ? `the server refused the proxy's answer: HTTP ${status}` : null;
    } finally {
      this.total -= 1;
      const left = (this.inFlight.get(flow.server) ?? 1) - 1;
      if (left <= 0) this.inFlight.delete(flow.server);
      else this.inFlight.set(flow.server, left);
    }
  }

  private post(t: Target, headers: Record<string, string | string[]>, body: Buffer): Promise<number> {
    const common = { host: t.host, port: t.port, path: t.path, method: "POST", headers: { ...headers, "content-length": String(body.length) }, agent: false as const, timeout: this.timeoutMs };
    return new Promise((resolve, reject) => {
      const onResponse = (res: http.IncomingMessage): void => {
        // Only the status matters; the body is read away (bounded by the timer below).
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
        res.on("error", reject);
      };
      const req = t.secure
        ? https.request(
            {
              ...common,
              // The same trust as the proxy's other connections to servers (src/proxy/server.ts).
              secureContext: upstreamContext(this.o.upstreamCa),
              rejectUnauthorized: !this.o.insecureUpstream,
              ...(net.isIP(t.host) === 0 ? { servername: t.host } : {}),
            } as https.RequestOptions,
            onResponse,
          )
        : http.request(common, onResponse);
      const timer = setTimeout(() => req.destroy(new Error(`no answer within ${this.timeoutMs} ms`)), this.timeoutMs);
      timer.unref();
      req.on("close", () => clearTimeout(timer));
      req.on("timeout", () => req.destroy(new Error(`no answer within ${this.timeoutMs} ms`)));
      req.on("error", reject);
      // An answer still on its way never keeps a stopping proxy alive.
      req.on("socket", (socket) => socket.unref());
      req.end(body);
    });
  }
}

/** Where the answer goes: the same host and port as the stream, at the stream's endpoint; a string says why nowhere. */
function targetOf(flow: McpFlow): Target | string {
  const { host, port, secure } = flow.ex.server;
  if (flow.transport === "http+sse") {
    const legacy = flow.legacy;
    // The endpoint event named the session's URL; one on another host or port is never written to.
    if (!legacy || legacy.key !== `${flow.server}${legacy.endpointPath}`) return "not answered: the session's endpoint on the stream's server is not known";
    return { secure, host, port, path: legacy.endpointPath };
  }
  return { secure, host, port, path: flow.ex.request.path };
}

/** The client's headers of the stream's exchange (its session, revision and credentials), for one POST of JSON. */
function headersOf(h: IncomingHttpHeaders, t: Target): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(h)) {
    if (value === undefined || NOT_CARRIED.has(name.toLowerCase()) || name.toLowerCase().startsWith(NOT_CARRIED_PREFIX)) continue;
    out[name] = value;
  }
  // The server's own name, as the proxy's forwarding sends it (a reverse mapping's client named the proxy instead).
  const name = net.isIPv6(t.host) ? `[${t.host}]` : t.host;
  out["host"] = t.port === (t.secure ? 443 : 80) ? name : `${name}:${t.port}`;
  out["content-type"] = "application/json";
  out["accept"] = "application/json, text/event-stream";
  return out;
}
