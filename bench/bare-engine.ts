/**
 * The `bare-engine` path: plain http-mitm-proxy 1.1.0 with keep-alive on and no hooks, as a child process.
 * Usage: node bench/bare-engine.ts <sslCaDir>. Trusts the bench upstream through NODE_EXTRA_CA_CERTS.
 * Prints `BARE_ENGINE_LISTENING <port>` on stderr once it accepts connections.
 */
import { Proxy } from "http-mitm-proxy";

const sslCaDir = process.argv[2];
if (!sslCaDir) {
  process.stderr.write("usage: bare-engine.ts <sslCaDir>\n");
  process.exit(2);
}
const proxy = new Proxy();
proxy.listen({ port: 0, host: "127.0.0.1", keepAlive: true, sslCaDir }, () => {
  process.stderr.write(`BARE_ENGINE_LISTENING ${proxy.httpPort}\n`);
});
process.once("SIGTERM", () => {
  proxy.close();
  process.exit(0);
});
