/**
 * First TLS handshake to a host the proxy has not seen: CONNECT to 127.0.0.N:port (a distinct loopback
 * address per host; `*.localhost` names do not resolve everywhere) and the TLS handshake with the
 * certificate the proxy issues for it; then, in a second pass, one GET through each tunnel (the proxy's first
 * connection to that host). Hosts are taken one after another.
 *
 * Event-loop stall in the proxy: the proxy's loop cannot be observed from outside, so a probe sends small
 * GETs back to back on one already-open keep-alive connection through the same proxy while the handshakes
 * run. A probe request that takes much longer than usual waited for the proxy's loop; the stall reported is
 * the slowest probe during the handshakes minus the probe's median before them.
 */
import net from "node:net";
import tls from "node:tls";
import { request, type Dispatcher } from "undici";
import type { RunningPath } from "./paths.ts";
import { ErrorTally, round, summarize, type Summary } from "./stats.ts";
import { nowMs, sleep, within } from "./time.ts";

export interface HandshakeResult {
  hosts: number;
  ok: number;
  /** CONNECT sent → TLS established (direct: TCP connect → TLS established). */
  handshakeMs: Summary;
  /** First request on an established tunnel → response complete (includes the proxy's new upstream connection). */
  firstResponseMs: Summary;
  probe: {
    baselineMs: Summary;
    /** Probe requests in flight at any time from the first CONNECT to the last first response. */
    duringMs: Summary;
    /** Slowest probe request overlapping a CONNECT + TLS handshake. */
    duringHandshakeMaxMs: number | null;
    /** Slowest probe request overlapping a first request (the proxy's new upstream connection). */
    duringFirstRequestMaxMs: number | null;
    /** Slowest probe during either phase − usual probe (median before). */
    stallMs: number | null;
  };
  errors: ReturnType<ErrorTally["toJSON"]>;
}

type Target = { host: string; port: number };

/** Opens a CONNECT tunnel; resolves with the raw socket once the proxy answered 200. */
function tunnel(proxy: Target, target: Target): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(proxy.port, proxy.host);
    let head = Buffer.alloc(0);
    socket.once("error", reject);
    socket.once("connect", () => socket.write(`CONNECT ${target.host}:${target.port} HTTP/1.1\r\nHost: ${target.host}:${target.port}\r\n\r\n`));
    const onData = (chunk: Buffer): void => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) return;
      socket.off("data", onData);
      socket.pause();
      const status = head.subarray(0, head.indexOf("\r\n")).toString("latin1");
      if (!/^HTTP\/1\.[01] 200/.test(status)) {
        socket.destroy();
        reject(new Error(`CONNECT ${target.host}:${target.port} answered: ${status}`));
        return;
      }
      if (head.length > end + 4) socket.unshift(head.subarray(end + 4));
      socket.off("error", reject);
      resolve(socket);
    };
    socket.on("data", onData);
  });
}

function tlsOver(socket: net.Socket | null, target: Target, ca: string): Promise<tls.TLSSocket> {
  return new Promise((resolve, reject) => {
    const options: tls.ConnectionOptions = { ca, host: target.host, ALPNProtocols: ["http/1.1"] };
    const s = socket ? tls.connect({ ...options, socket }) : tls.connect({ ...options, port: target.port });
    s.once("secureConnect", () => {
      s.off("error", reject);
      resolve(s);
    });
    s.once("error", reject);
  });
}

function getHealth(s: tls.TLSSocket, target: Target): Promise<void> {
  return new Promise((resolve, reject) => {
    let text = "";
    s.setEncoding("utf8");
    s.on("data", (c: string) => {
      text += c;
      const bodyAt = text.indexOf("\r\n\r\n");
      if (bodyAt >= 0 && text.slice(bodyAt + 4).includes("ok")) {
        if (!text.startsWith("HTTP/1.1 200")) reject(new Error(`GET /health answered: ${text.split("\r\n")[0]}`));
        else resolve();
      }
    });
    s.once("error", reject);
    s.once("end", () => reject(new Error(`connection closed before the response was complete: ${JSON.stringify(text.slice(0, 200))}`)));
    s.write(`GET /health HTTP/1.1\r\nHost: ${target.host}:${target.port}\r\nConnection: close\r\n\r\n`);
  });
}

/** Small GETs back to back on one keep-alive connection until stopped; returns [start, latency] pairs. */
function startProbe(dispatcher: Dispatcher, origin: string): { stop(): Promise<[number, number][]> } {
  const samples: [number, number][] = [];
  let running = true;
  const loop = (async () => {
    const deadline = nowMs() + 120_000;
    while (running && nowMs() < deadline) {
      const t0 = nowMs();
      try {
        const res = await request(`${origin}/health`, { dispatcher });
        await res.body.text();
        samples.push([t0, nowMs() - t0]);
      } catch {
        await sleep(10);
      }
      await sleep(1);
    }
  })();
  return {
    async stop() {
      running = false;
      await within(20_000, "handshake probe", loop);
      return samples;
    },
  };
}

export async function runHandshakes(
  path: RunningPath,
  hosts: readonly Target[],
  probeDispatcher: Dispatcher,
  probeOrigin: string,
  /** Stop taking new hosts after this many ms (the bench's time budget). */
  budgetMs: number,
): Promise<HandshakeResult> {
  const errors = new ErrorTally();
  const handshakes: number[] = [];
  const firstResponses: number[] = [];
  const handshakeSpans: [number, number][] = [];
  const firstRequestSpans: [number, number][] = [];

  // The probe connection exists before the measurement starts.
  await (await request(`${probeOrigin}/health`, { dispatcher: probeDispatcher })).body.text();
  const probe = startProbe(probeDispatcher, probeOrigin);
  await sleep(500);
  const measureFrom = nowMs();

  // Phase 1: every handshake, one host after another (sockets kept open). Phase 2, after a pause: the first
  // request on each, which makes the proxy open its own connection to that host. Probe samples are
  // attributed to the phase they overlap.
  const open: { target: Target; socket: tls.TLSSocket }[] = [];
  const stopAt = nowMs() + budgetMs;
  for (const target of hosts) {
    if (nowMs() > stopAt) {
      errors.add(new Error(`time budget (${budgetMs} ms) used up: remaining hosts not tried`));
      break;
    }
    try {
      const t0 = nowMs();
      const socket = await within(10_000, `CONNECT + TLS handshake to ${target.host}`, (async () => {
        const raw = path.proxy ? await tunnel(path.proxy, target) : null;
        return tlsOver(raw, target, path.clientCaPem);
      })());
      const t1 = nowMs();
      handshakes.push(t1 - t0);
      handshakeSpans.push([t0, t1]);
      open.push({ target, socket });
    } catch (err) {
      errors.add(err);
    }
  }
  await sleep(150);
  for (const { target, socket } of open) {
    try {
      const t1 = nowMs();
      await within(10_000, `first request to ${target.host}`, getHealth(socket, target));
      const t2 = nowMs();
      firstResponses.push(t2 - t1);
      firstRequestSpans.push([t1, t2]);
    } catch (err) {
      errors.add(err);
    } finally {
      socket.destroy();
    }
  }
  const measureTo = nowMs();
  await sleep(50);
  const samples = await probe.stop();
  const baseline = summarize(samples.filter(([t]) => t < measureFrom).map(([, l]) => l));
  const during = summarize(samples.filter(([t, l]) => t + l >= measureFrom && t <= measureTo).map(([, l]) => l));
  const maxOverlapping = (spans: [number, number][]): number | null => {
    const hits = samples.filter(([t, l]) => spans.some(([a, b]) => t <= b && t + l >= a)).map(([, l]) => l);
    return hits.length ? round(Math.max(...hits)) : null;
  };
  return {
    hosts: hosts.length,
    ok: firstResponses.length,
    handshakeMs: summarize(handshakes),
    firstResponseMs: summarize(firstResponses),
    probe: {
      baselineMs: baseline,
      duringMs: during,
      duringHandshakeMaxMs: maxOverlapping(handshakeSpans),
      duringFirstRequestMaxMs: maxOverlapping(firstRequestSpans),
      stallMs: during.max !== null && baseline.p50 !== null ? round(during.max - baseline.p50) : null,
    },
    errors: errors.toJSON(),
  };
}
