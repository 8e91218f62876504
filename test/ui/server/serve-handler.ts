import http, { type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface ServedHandler {
  get(path: string): Promise<{ status: number; body: string; headers: IncomingHttpHeaders }>;
  close(): Promise<void>;
}

/** One of the UI server's GET handlers alone on a loopback server (the UI server's guard is tested with the page). */
export async function serveHandler(handle: (res: ServerResponse, url: URL) => void): Promise<ServedHandler> {
  const server = http.createServer((req, res) => handle(res, new URL(req.url ?? "/", "http://127.0.0.1")));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    get: (path) =>
      new Promise((resolve, reject) => {
        http
          .get({ host: "127.0.0.1", port, path }, (res) => {
            let body = "";
            res.on("data", (c: Buffer) => (body += c.toString()));
            res.on("end", () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
          })
          .on("error", reject);
      }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
