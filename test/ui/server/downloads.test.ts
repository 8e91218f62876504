import { afterEach, describe, expect, it } from "vitest";
import { countInThread } from "../../../src/tokens/token-counter.js";
import { downloadHandler } from "../../../src/ui/server/downloads.js";
import { RecordHistory } from "../../../src/ui/server/record-history.js";
import { twoSessionFiles } from "../fixtures/two-sessions.js";
import { serveHandler, type ServedHandler } from "./serve-handler.js";

let server: ServedHandler | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(lines: string[], maxSourceBytes?: number): Promise<(path: string) => Promise<{ status: number; body: string; disposition: string }>> {
  const history = new RecordHistory();
  for (const l of lines) history.append(l);
  server = await serveHandler(downloadHandler(history, "test capture", countInThread, maxSourceBytes));
  const served = server;
  return async (path) => {
    const r = await served.get(path);
    return { ...r, disposition: String(r.headers["content-disposition"] ?? "") };
  };
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
    await server!.close();
    const small = await (await serve(a, 1024))(`/api/download/capture.har?q=`);
    expect(small.status).toBe(413);
    expect(small.body).toContain("mcp-wiretap export");
  });
});
