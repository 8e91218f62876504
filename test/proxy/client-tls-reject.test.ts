/**
 * Clients that do not trust the proxy's CA and go away without a TLS alert still leave a `client_tls_error`
 * record with the hint: a Node client (checks the certificate after the handshake, then just closes) and a
 * client that sends its ClientHello, reads the ServerHello and closes the connection without an alert (what
 * Python's httpx over anyio does: its ssl.MemoryBIO alert is never flushed; also run with Python itself).
 * A client that trusts the CA and sends a request leaves none.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import net from "node:net";
import { Duplex } from "node:stream";
import tls from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHttpsUpstream, type TestUpstream } from "../helpers/https-upstream.js";
import { openTunnel, rawRequest, startTestProxy, tlsThroughTunnel, type LogRecord, type TestProxy } from "../helpers/proxy-harness.js";

const HINT = /may not trust the mcp-wiretap CA/;
const PYTHON = ["/usr/bin/python3", "/usr/local/bin/python3"].find((p) => existsSync(p));

/**
 * What anyio does for httpx: TLS over ssl.MemoryBIO with the default (verifying) context; when the
 * certificate check fails, the alert OpenSSL put in the outgoing BIO is never sent, the socket just closes.
 */
const PYTHON_MEMORY_BIO = `
import socket, ssl, sys
host, port, target = sys.argv[1], int(sys.argv[2]), sys.argv[3]
sock = socket.create_connection((host, port), timeout=5)
sock.sendall(f"CONNECT {target} HTTP/1.1\\r\\nHost: {target}\\r\\n\\r\\n".encode())
head = b""
while b"\\r\\n\\r\\n" not in head:
    head += sock.recv(4096)
incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
tls = ssl.create_default_context().wrap_bio(incoming, outgoing, server_hostname="localhost")
while True:
    try:
        tls.do_handshake()
        print("trusted")
        break
    except ssl.SSLWantReadError:
        sock.sendall(outgoing.read())
        incoming.write(sock.recv(65536))
    except ssl.SSLCertVerificationError as e:
        print("rejected:", e.verify_message, "alert pending:", outgoing.pending)
        break
sock.close()
`;
import { expectRecordsMatchSchemas } from "../records/expect-records.js";
import { skipNote } from "../helpers/skip-note.js";

/** The ClientHello a verifying TLS client sends for `servername`, captured from a stream nobody answers. */
function clientHello(servername: string): Promise<Buffer> {
  return new Promise((resolve) => {
    let client: tls.TLSSocket | null = null;
    const wire = new Duplex({
      read() {},
      write(chunk: Buffer, _encoding, callback) {
        resolve(Buffer.from(chunk));
        callback();
        setImmediate(() => client?.destroy());
      },
    });
    client = tls.connect({ socket: wire as unknown as net.Socket, servername, rejectUnauthorized: true });
    client.on("error", () => undefined);
  });
}

/** Resolves with the first bytes the proxy sends back through the tunnel. */
function firstBytes(socket: net.Socket): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("no ServerHello within 5 s")), 5_000);
    socket.once("data", (chunk: Buffer) => {
      clearTimeout(timer);
      resolve(chunk);
    });
    socket.resume();
  });
}

skipNote(import.meta.url, !PYTHON, "python3 is not installed");
describe("a client that rejects the proxy's certificate", () => {
  let proxy: TestProxy;
  const upstreams: TestUpstream[] = [];

  beforeAll(async () => {
    proxy = await startTestProxy();
  });

  afterAll(async () => {
    await Promise.all(upstreams.map((u) => u.close()));
    await proxy?.stop();
  });

  async function upstream(): Promise<TestUpstream> {
    const u = await startHttpsUpstream();
    upstreams.push(u);
    return u;
  }

  const tlsErrorFor = (port: number) => (r: LogRecord) => r.event === "client_tls_error" && r.server === `localhost:${port}`;

  it("a Node client (checks after the handshake, closes without an alert) leaves a client_tls_error", async () => {
    const u = await upstream();
    const { status, socket } = await openTunnel(proxy, `localhost:${u.port}`);
    expect(status).toBe(200);
    const secure = tls.connect({ socket, servername: "localhost", rejectUnauthorized: true });
    const failure = await new Promise<Error>((resolve, reject) => {
      secure.once("secureConnect", () => reject(new Error("the client trusted a CA it was never given")));
      secure.once("error", resolve);
    });
    expect(failure.message).toMatch(/certificate/i);
    const record = await proxy.waitForRecord(tlsErrorFor(u.port), { what: "client_tls_error of the Node client" });
    expect(String(record.hint)).toMatch(HINT);
    expect(String(record.hint)).toContain("mcp-wiretap ca path");
    expect(u.requests).toHaveLength(0);
    expectRecordsMatchSchemas(await proxy.records(), "client_tls_error");
  });

  it.each([
    ["closes (FIN) after the ServerHello", "end"],
    ["drops the connection after the ServerHello", "destroy"],
  ] as const)("a raw client that sends a ClientHello, %s, without an alert, leaves a client_tls_error", async (_label, how) => {
    const u = await upstream();
    const { status, socket } = await openTunnel(proxy, `localhost:${u.port}`);
    expect(status).toBe(200);
    socket.write(await clientHello("localhost"));
    const answer = await firstBytes(socket);
    expect(answer[0]).toBe(0x16); // a TLS handshake record: the ServerHello
    if (how === "end") socket.end();
    else socket.destroy();
    const record = await proxy.waitForRecord(tlsErrorFor(u.port), { what: `client_tls_error after ${how}` });
    expect(String(record.hint)).toMatch(HINT);
    expect(record.client).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(u.requests).toHaveLength(0);
    expectRecordsMatchSchemas([record], "client_tls_error");
  });

  it.skipIf(!PYTHON)("Python's ssl.MemoryBIO (httpx over anyio) rejecting the certificate leaves a client_tls_error", async () => {
    const u = await upstream();
    const out = await new Promise<string>((resolve, reject) =>
      execFile(PYTHON!, ["-c", PYTHON_MEMORY_BIO, proxy.host, String(proxy.port), `localhost:${u.port}`], { timeout: 15_000 }, (err, stdout, stderr) =>
        err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout),
      ),
    );
    expect(out).toMatch(/^rejected: .*alert pending: [1-9]/);
    const record = await proxy.waitForRecord(tlsErrorFor(u.port), { what: "client_tls_error of the Python client" });
    expect(String(record.hint)).toMatch(HINT);
    expect(u.requests).toHaveLength(0);
  });

  it("a client that trusts the CA and sends its request leaves no client_tls_error", async () => {
    const trusted = await upstream();
    const { socket } = await openTunnel(proxy, `localhost:${trusted.port}`);
    const secure = await tlsThroughTunnel(socket, "localhost", proxy.caPem);
    const res = await rawRequest(secure, `GET /bytes?n=3 HTTP/1.1\r\nHost: localhost:${trusted.port}\r\nConnection: close\r\n\r\n`);
    expect(res.status).toBe(200);
    secure.destroy();
    // A later rejection's record is the marker that the log has caught up with this tunnel's end.
    const marker = await upstream();
    const { socket: raw } = await openTunnel(proxy, `localhost:${marker.port}`);
    raw.write(await clientHello("localhost"));
    await firstBytes(raw);
    raw.end();
    await proxy.waitForRecord(tlsErrorFor(marker.port));
    expect((await proxy.records()).filter(tlsErrorFor(trusted.port))).toEqual([]);
  });
});
