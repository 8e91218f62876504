/**
 * A TCP hop on loopback that delays every answer: what the target sends back reaches the client `delayMs`
 * later (a server that far away, or that busy), in order. `silence()` makes it stop answering while keeping
 * every connection open (a hung server: nothing is refused, nothing comes back). Used by the shared-state
 * tests and the bench (which imports it by path: no project imports here, erasable syntax only).
 */
import net from "node:net";

export interface DelayingHop {
  port: number;
  /** Answers held from now on (never delivered); connections stay open. */
  silence(): void;
  /** Bytes clients sent since `silence()`: what they still wait for an answer to. */
  unansweredBytes(): number;
  close(): Promise<void>;
}

export async function startDelayingHop(target: { host: string; port: number }, delayMs: number): Promise<DelayingHop> {
  let silent = false;
  let unanswered = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.setNoDelay(true);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.on("data", (chunk) => {
      if (silent) unanswered += chunk.length;
      upstream.write(chunk);
    });
    client.on("end", () => upstream.end());
    // Same delay for every chunk: the timers fire in the order they were set, so the bytes keep theirs.
    upstream.on("data", (chunk) => {
      if (silent) return;
      setTimeout(() => !silent && !client.destroyed && client.write(chunk), delayMs);
    });
    upstream.on("end", () => setTimeout(() => !silent && client.end(), delayMs));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    silence: () => void (silent = true),
    unansweredBytes: () => unanswered,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
