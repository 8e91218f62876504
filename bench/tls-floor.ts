/**
 * `node bench/tls-floor.ts [N]`: what N idle TLS connections cost a bare Node process, nothing else
 * running — the floor under the "open SSE streams" figure, where a decrypting proxy holds two TLS
 * connections per stream (one with the client, one with the server). Loopback only, bounded in time.
 *
 * The server side runs in a child process (its RSS is its own); the client side is this process.
 */
import { fork } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import tls from "node:tls";
import { fileURLToPath } from "node:url";
import { rssMiB as rssOf } from "./child.ts";
import { createBenchPki } from "./pki.ts";
import { sleep } from "./time.ts";

const rssMiB = (): number => rssOf(process.pid) ?? 0;
const settle = (): Promise<void> => sleep(500);

if (process.argv[2] === "--server") {
  const { key, cert } = JSON.parse(process.argv[3] ?? "{}") as { key: string; cert: string };
  const held: tls.TLSSocket[] = [];
  const server = tls.createServer({ key, cert }, (socket) => {
    held.push(socket);
    socket.on("error", () => undefined);
    socket.write("x");
  });
  server.listen(0, "127.0.0.1", () => process.send?.({ port: (server.address() as { port: number }).port, rss: rssMiB() }));
  process.on("message", () => {
    globalThis.gc?.();
    void settle().then(() => process.send?.({ held: held.length, rss: rssMiB() }));
  });
} else {
  const n = Math.min(5000, Number(process.argv[2] ?? 1000));
  const tmp = mkdtempSync(path.join(os.tmpdir(), "tls-floor-"));
  const pki = createBenchPki(tmp, ["127.0.0.1"]);
  const child = fork(fileURLToPath(import.meta.url), ["--server", JSON.stringify({ key: pki.keyPem, cert: pki.certPem })], { execArgv: ["--expose-gc"] });
  const next = (): Promise<Record<string, number>> => new Promise((resolve) => child.once("message", (m) => resolve(m as Record<string, number>)));
  const watchdog = setTimeout(() => {
    process.stderr.write("tls-floor: timed out\n");
    child.kill();
    process.exit(1);
  }, 60_000);
  const started = await next();
  const clientBefore = rssMiB();
  const sockets: tls.TLSSocket[] = [];
  for (let i = 0; i < n; i += 100) {
    const batch = Array.from({ length: Math.min(100, n - i) }, () => new Promise<void>((resolve, reject) => {
      const s = tls.connect({ host: "127.0.0.1", port: started.port!, ca: pki.caPem });
      s.once("data", () => resolve());
      s.once("error", reject);
      sockets.push(s);
    }));
    await Promise.all(batch);
  }
  child.send("measure");
  const server = await next();
  globalThis.gc?.();
  await settle();
  const clientAfter = rssMiB();
  const kib = (before: number, after: number): string => (((after - before) * 1024) / n).toFixed(1);
  process.stdout.write(`${n} idle TLS connections, Node ${process.version}:\n`);
  process.stdout.write(`  server side: RSS ${started.rss!.toFixed(1)} → ${server.rss!.toFixed(1)} MiB (${kib(started.rss!, server.rss!)} KiB each, ${server.held} held)\n`);
  process.stdout.write(`  client side: RSS ${clientBefore.toFixed(1)} → ${clientAfter.toFixed(1)} MiB (${kib(clientBefore, clientAfter)} KiB each)\n`);
  for (const s of sockets) s.destroy();
  child.kill();
  clearTimeout(watchdog);
  rmSync(tmp, { recursive: true, force: true });
}
