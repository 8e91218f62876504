import { appendFile, mkdtemp, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { RecordHistory } from "../../../src/ui/server/record-history.js";
import { uiCommand } from "../../../src/ui/server/serve-logs.js";
import { waitUntil } from "../../helpers/wait-until.js";

const rec = (name: string): string => `${JSON.stringify({ level: "info", time: "2026-11-23T10:00:00.000Z", event: "rpc", name })}\n`;

let dir: string | undefined;
let stop: AbortController | undefined;
let running: Promise<void> | undefined;

afterEach(async () => {
  stop?.abort();
  await running;
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

/** GET with the token (as the page's cookie would carry it), the body as text. */
function get(url: URL, pathname: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(`http://127.0.0.1:${url.port}${pathname}`, { headers: { Cookie: `mcp_wiretap_ui_${url.port}=${url.searchParams.get("token")}` } }, (res) => {
        let body = "";
        res.on("data", (c: Buffer) => (body += c.toString()));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      })
      .on("error", reject);
  });
}

async function serve(paths: string[], follow: boolean): Promise<URL> {
  stop = new AbortController();
  let ready: URL | undefined;
  running = uiCommand(paths, { uiPort: 0, follow }, { signal: stop.signal, onReady: (u) => (ready = new URL(u)) });
  await waitUntil(() => ready !== undefined, { timeoutMs: 10_000, what: "the UI server" });
  return ready!;
}

describe("mcp-wiretap ui", () => {
  it("serves a folder's logs oldest first: rotated files before the current one, other files left out", async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-ui-cmd-"));
    await writeFile(path.join(dir, "a.ndjson.2"), rec("a2"));
    await writeFile(path.join(dir, "a.ndjson.1"), rec("a1"));
    await writeFile(path.join(dir, "a.ndjson"), rec("a0") + "not a record\n");
    await writeFile(path.join(dir, "b.ndjson"), rec("b0"));
    await writeFile(path.join(dir, "notes.txt"), rec("notes"));
    const url = await serve([dir], false);
    const { status, body } = await get(url, "/api/records");
    expect(status).toBe(200);
    expect(body.trim().split("\n").map((l) => (JSON.parse(l) as { name: string }).name)).toEqual(["a2", "a1", "a0", "b0"]);
  });

  it("with --follow, sends what is appended to the live feed", async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-ui-cmd-"));
    const file = path.join(dir, "live.ndjson");
    await writeFile(file, rec("first"));
    const url = await serve([file], true);
    for (let i = 0; !(await get(url, "/api/records")).body.includes("first"); i++) {
      if (i > 100) throw new Error("the first record never came");
      await new Promise((r) => setTimeout(r, 50));
    }
    const events: string[] = [];
    const req = http.get(`http://127.0.0.1:${url.port}/api/feed?from=1`, { headers: { Cookie: `mcp_wiretap_ui_${url.port}=${url.searchParams.get("token")}` } }, (res) => {
      res.on("data", (c: Buffer) => events.push(c.toString()));
    });
    try {
      await appendFile(file, rec("appended") + "{broken\n");
      await waitUntil(() => events.join("").includes("appended"), { timeoutMs: 5_000, what: "the appended record on the feed" });
      const data = events.join("").split("\n").filter((l) => l.startsWith("data: ")).map((l) => JSON.parse(l.slice(6)) as { lines: string[] });
      const lines = data.flatMap((d) => d.lines);
      // Each line travels on its own: a broken one cannot take its neighbours with it.
      expect(JSON.parse(lines[0]!)).toMatchObject({ name: "appended" });
    } finally {
      req.destroy();
    }
  });
});

describe("record history", () => {
  it("keeps at most its bound, says how many it let go, and a reader behind them learns it", () => {
    const h = new RecordHistory(3, 1_000_000);
    for (let i = 0; i < 5; i++) h.append(`{"n":${i}}`);
    h.append("not json");
    expect(h.start).toBe(2);
    expect(h.end).toBe(5);
    expect(h.slice(0)).toEqual({ from: 2, lines: ['{"n":2}', '{"n":3}', '{"n":4}'] });
  });
});
