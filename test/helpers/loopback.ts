/** Plain HTTP servers on 127.0.0.1 for one test file, and free loopback ports for servers that need one named. */
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import { afterEach } from "vitest";

/** `listen(handler)` starts a server on a free loopback port; every one is closed after each test. */
export function loopbackServers(): (handler: http.RequestListener) => Promise<number> {
  const servers: http.Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
  });
  return async (handler) => {
    const server = http.createServer(handler);
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    return (server.address() as AddressInfo).port;
  };
}

/** A loopback port free just now (for a server that cannot be told "port 0"). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
