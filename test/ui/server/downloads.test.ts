import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { downloadHandler } from "../../../src/ui/server/downloads.js";
import { RecordHistory } from "../../../src/ui/server/record-history.js";
import { twoSessionFiles } from "../fixtures/two-sessions.js";

let server: http.Server | undefined;

afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** The handler alone on a loopback server (the UI server's guard is tested with the page). */
async function serve(lines: string[], maxSourceBytes?: number): Promise<(path: string) => Promise<{ status: number; body: string; disposition: string }>> {
  const history = new RecordHistory();
  for (const l of lines) history.append(l);
  const handle = downloadHandler(history, "test capture", maxSourceBytes);
  server = http.createServer((req, res) => handle(res, new URL(req.url ?? "/", "http://127.0.0.1")));
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return (path) =>
    new Promise((resolve, reject) => {
      http
        .get({ host: "127.0.0.1", port, path }, (res) => {
          let body = "";
          res.on("data", (c: Buffer) => (body += c.toString()));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body, disposition: String(res.headers["content-disposition"] ?? "") }));
        })
        .on("error", reject);
    });
}

const { a } = twoSessionFiles();
const flowOf = (line: string): string => (JSON.parse(line) as { flow: string }).flow;

describe("UI downloads", () => {
  it("status:error holds the failed calls' requests and answers, as the page pairs them, as an attachment", async () => {
    const get = await serve(a);
    const res = await get(`/api/download/records.ndjson?q=${encodeURIComponent("status:error")}`);
    expect(res.status).toBe(200);
    expect(res.disposition).toMatch(/^attachment; filename="mcp-wiretap-\d{8}-\d{6}\.ndjson"$/);
    const lines = res.body.trim().split("\n");
    expect(lines.map(flowOf)).toEqual(["fa-12", "fa-12", "fa-21", "fa-21"]);
    expect(lines).toEqual(a.filter((l) => ["fa-12", "fa-21"].includes(flowOf(l)) && l.includes('"event":"rpc"')));
  });

  it("stops where the page stood (upto)", async () => {
    const get = await serve(a);
    const res = await get(`/api/download/records.ndjson?q=&upto=10`);
    expect(res.body).toBe(
      a
        .slice(0, 10)
        .filter((l) => l.includes('"event":"rpc"'))
        .map((l) => `${l}\n`)
        .join(""),
    );
  });

  it("refuses a filter it cannot read, a name it does not serve, and more records than a download reads", async () => {
    const get = await serve(a);
    expect((await get(`/api/download/records.ndjson?q=dir:sideways`)).status).toBe(400);
    expect((await get(`/api/download/../../etc/passwd`)).status).toBe(404);
    await new Promise<void>((resolve) => server!.close(() => resolve()));
    const small = await (await serve(a, 1024))(`/api/download/capture.har?q=`);
    expect(small.status).toBe(413);
    expect(small.body).toContain("mcp-wiretap export");
  });
});
