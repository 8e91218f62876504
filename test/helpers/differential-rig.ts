/**
 * The differential rig: one in-process proxy per policy mode (monitor, enforce), each with its own recording
 * upstreams (TLS behind a CONNECT tunnel, plain TCP behind absolute-URI requests), raw-socket clients, and
 * the check of `differential-check.ts` polled until the records have settled.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { compareWithRecords, parseAsUpstream, type Finding } from "./differential-check.js";
import { startDifferentialUpstream, type DifferentialUpstream } from "./differential-upstream.js";
import { openTunnel, rawProxyExchange, readAll, startTestProxy, tlsThroughTunnel, type LogRecord, type TestProxy } from "./proxy-harness.js";

export type PolicyMode = "monitor" | "enforce";
export type Route = "tunnel" | "absolute";

export const DENIED_TOOL = "delete_everything";
export const ALLOWED_TOOL = "echo";

const policyText = (mode: PolicyMode): string => `mode: ${mode}
rules:
  - name: no-delete
    action: deny
    reason: destructive
    match: { tool: ${DENIED_TOOL} }
detectors: { secrets: deny }
`;

export interface Side {
  mode: PolicyMode;
  proxy: TestProxy;
  /** The upstream each route reaches. */
  upstream: Record<Route, DifferentialUpstream>;
}

export interface Rig {
  sides: Record<PolicyMode, Side>;
  close(): Promise<void>;
}

export async function startRig(): Promise<Rig> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "mcp-wiretap-differential-"));
  const sides = {} as Record<PolicyMode, Side>;
  for (const mode of ["monitor", "enforce"] as const) {
    const file = path.join(dir, `${mode}.yaml`);
    writeFileSync(file, policyText(mode));
    sides[mode] = {
      mode,
      proxy: await startTestProxy({ config: file }),
      upstream: { tunnel: await startDifferentialUpstream({ tls: true }), absolute: await startDifferentialUpstream({ tls: false }) },
    };
  }
  return {
    sides,
    async close() {
      for (const side of Object.values(sides)) {
        await side.proxy.stop();
        await side.upstream.tunnel.close();
        await side.upstream.absolute.close();
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A request template for one route: `{U}` becomes the upstream's authority; on the absolute route a leading
 * origin-form target (`GET /x`) becomes absolute (`GET http://U/x`).
 */
export function materialise(template: string | Buffer, route: Route, authority: string): Buffer {
  let text = (typeof template === "string" ? Buffer.from(template, "latin1") : template).toString("latin1").replaceAll("{U}", authority);
  if (route === "absolute") text = text.replace(/^([A-Z]+) \//, `$1 http://${authority}/`);
  return Buffer.from(text, "latin1");
}

/**
 * Sends raw bytes through the proxy on one route and returns what came back once the proxy closed the
 * connection. `parts` are written one after the other, each after the previous answer started when
 * `waitBetween` (for `Expect: 100-continue`).
 */
export async function sendRaw(side: Side, route: Route, parts: (string | Buffer)[], opts: { waitBetween?: boolean; timeoutMs?: number } = {}): Promise<Buffer> {
  const upstream = side.upstream[route];
  const bytes = parts.map((p) => materialise(p, route, upstream.authority));
  if (route === "absolute" && !opts.waitBetween) return rawProxyExchange(side.proxy, Buffer.concat(bytes), opts.timeoutMs ?? 5_000);
  let socket: net.Socket;
  if (route === "tunnel") {
    const { status, socket: tunnel } = await openTunnel(side.proxy, upstream.authority);
    if (status !== 200) throw new Error(`CONNECT ${upstream.authority} answered ${status}`);
    socket = await tlsThroughTunnel(tunnel, "127.0.0.1", side.proxy.caPem);
  } else {
    socket = net.connect({ host: side.proxy.host, port: side.proxy.port });
    await new Promise((resolve) => socket.once("connect", resolve));
  }
  const received: Buffer[] = [];
  socket.on("data", (c: Buffer) => received.push(c));
  // readAll keeps every byte from here on as well: `received` only tells when the answer began.
  const done = readAll(socket, opts.timeoutMs ?? 5_000);
  for (const [i, part] of bytes.entries()) {
    if (i > 0 && opts.waitBetween) {
      const deadline = Date.now() + 2_000;
      while (received.length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    socket.write(part);
  }
  return done;
}

/**
 * Polls the differential check until it finds nothing (records are written when exchanges end) or
 * `timeoutMs` passes; returns what it still finds then. With `casePath` (a fixed-width `?case=NNNN`), only
 * findings about that case, or about requests of no case at all, count: one failing case does not fail
 * every case after it.
 */
export async function differentialFindings(side: Side, route: Route, casePath?: string, timeoutMs = 3_000): Promise<Finding[]> {
  const upstream = side.upstream[route];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const records: LogRecord[] = await side.proxy.records();
    const requests = await parseAsUpstream(upstream.connections);
    const findings = compareWithRecords(requests, records, { server: upstream.authority, enforce: side.mode === "enforce", deniedTools: [DENIED_TOOL] }).filter(
      (f) => casePath === undefined || f.detail.includes(casePath) || !f.detail.includes("?case="),
    );
    if (findings.length === 0 || Date.now() > deadline) return findings;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The JSON-RPC call of `tool` as a body. */
export function callBody(id: number | string, tool: string): string {
  return JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: tool, arguments: {} } });
}

/** `body` as one chunk and the last chunk. */
export function chunked(body: string): string {
  return `${Buffer.byteLength(body, "latin1").toString(16)}\r\n${body}\r\n0\r\n\r\n`;
}
