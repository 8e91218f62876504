import { once } from "node:events";
import type { AddressInfo } from "node:net";
import tls from "node:tls";
import { beforeAll, describe, expect, it } from "vitest";
import { LeafIssuer, loadOrCreateCa, type CertificateAuthority } from "../../src/ca/index.js";
import { tempDir } from "./temp-dirs.js";

let ca: CertificateAuthority;
let leaves: LeafIssuer;

beforeAll(async () => {
  ca = await loadOrCreateCa(await tempDir());
  leaves = await LeafIssuer.create(ca);
});

/** Serves one TLS connection on `listenHost`, then connects to it trusting only the CA. */
async function handshake(
  server: tls.Server,
  listenHost: string,
  connect: Omit<tls.ConnectionOptions, "port" | "ca">,
): Promise<{ authorized: boolean; reply: string }> {
  server.on("secureConnection", (socket) => socket.end("hello over TLS"));
  server.listen(0, listenHost);
  await once(server, "listening");
  try {
    const { port } = server.address() as AddressInfo;
    const socket = tls.connect({ ...connect, port, ca: [ca.certPem] });
    await once(socket, "secureConnect");
    const authorized = socket.authorized;
    let reply = "";
    socket.setEncoding("utf8").on("data", (chunk: string) => (reply += chunk));
    await once(socket, "end");
    socket.destroy();
    return { authorized, reply };
  } finally {
    server.close();
  }
}

describe("a real TLS handshake on loopback with a leaf certificate", () => {
  it("verifies a DNS name picked by SNI", async () => {
    const server = tls.createServer({
      SNICallback: (servername, callback) => callback(null, leaves.secureContextFor(servername)),
    });
    const result = await handshake(server, "127.0.0.1", { host: "127.0.0.1", servername: "mcp.example.test" });
    expect(result).toEqual({ authorized: true, reply: "hello over TLS" });
  });

  it("verifies 127.0.0.1", async () => {
    const { certPem } = leaves.certificateFor("127.0.0.1");
    const server = tls.createServer({ key: leaves.keyPem, cert: certPem });
    const result = await handshake(server, "127.0.0.1", { host: "127.0.0.1" });
    expect(result).toEqual({ authorized: true, reply: "hello over TLS" });
  });

  it("verifies ::1", async () => {
    const { certPem } = leaves.certificateFor("[::1]");
    const server = tls.createServer({ key: leaves.keyPem, cert: certPem });
    const result = await handshake(server, "::1", { host: "::1" });
    expect(result).toEqual({ authorized: true, reply: "hello over TLS" });
  });

  it("is refused for a name the certificate does not carry", async () => {
    const server = tls.createServer({
      SNICallback: (_servername, callback) => callback(null, leaves.secureContextFor("other.example.test")),
    });
    await expect(
      handshake(server, "127.0.0.1", { host: "127.0.0.1", servername: "mcp.example.test" }),
    ).rejects.toThrow(/does not match|altnames/i);
  });
});
