/**
 * The web UI's pictures and downloads, read from what the page draws in a real browser (headless Debian
 * chromium): `mcp-wiretap ui a.ndjson b.ndjson` (in process) on two sessions' logs. The timeline has one
 * bar per call, the refused one marked, ticks where progress was; each tool's histograms add up to its
 * calls; the UTC toggle changes the times shown; a download holds what the filter shows. With
 * MCP_WIRETAP_UPDATE_SCREENSHOT=1 the pictures of docs/ui.md are written to docs/images/ (times in UTC,
 * the toggle's test runs first; the footer, which names the temporary files, is left out).
 */
import http from "node:http";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Browser, Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PassThrough, Writable } from "node:stream";
import { exportHtml } from "../../src/ui/server/html-export.js";
import { uiCommand } from "../../src/ui/server/serve-logs.js";
import { REPO_ROOT } from "../helpers/proxy-harness.js";
import { waitUntil } from "../helpers/wait-until.js";
import { clickTab, launchBrowser, setFilter, waitInPage } from "./browser.js";
import { twoSessionFiles } from "./fixtures/two-sessions.js";

type Rec = Record<string, unknown> & { related?: Record<string, unknown> };

let browser: Browser;
let page: Page;
let tmp: string;
let url: URL;
let stop: AbortController;
let serving: Promise<void>;
const files = twoSessionFiles();
const all: { line: string; r: Rec }[] = [...files.a, ...files.b].map((line) => ({ line, r: JSON.parse(line) as Rec }));
const requests = all.filter(({ r }) => r.event === "rpc" && r.kind === "request" && r.id !== null);
const shotPath = (name: string): string => (process.env.MCP_WIRETAP_UPDATE_SCREENSHOT === "1" ? path.join(REPO_ROOT, "docs", "images", name) : path.join(tmp, name));

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-ui-pictures-"));
  await writeFile(path.join(tmp, "a.ndjson"), files.a.join("\n") + "\n");
  await writeFile(path.join(tmp, "b.ndjson"), files.b.join("\n") + "\n");
  stop = new AbortController();
  let ready: string | undefined;
  serving = uiCommand([path.join(tmp, "a.ndjson"), path.join(tmp, "b.ndjson")], { uiPort: 0, follow: false }, { signal: stop.signal, onReady: (u) => (ready = u) });
  await waitUntil(() => ready !== undefined, { timeoutMs: 10_000, what: "the UI server" });
  url = new URL(ready!);
  browser = await launchBrowser();
  page = await browser.newPage();
  // A zone that is not UTC, so that local and UTC times differ.
  await page.emulateTimezone("Asia/Kolkata");
  await page.setViewport({ width: 1280, height: 620 });
  await page.goto(url.href);
  await waitInPage(page, `document.querySelector(".status .count")?.textContent.includes("${all.length} records")`, "every record loaded");
}, 60_000);

afterAll(async () => {
  await browser?.close();
  stop?.abort();
  await serving;
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

describe("web UI pictures", () => {
  it("orders two files by time, not one file after the other", async () => {
    const served = (await page.evaluate(`fetch("/api/records").then((r) => r.text())`)) as string;
    const lines = served.trim().split("\n");
    expect(new Set(lines)).toEqual(new Set(all.map((a) => a.line)));
    const times = lines.map((l) => Date.parse((JSON.parse(l) as Rec).time as string));
    expect(times).toEqual([...times].sort((x, y) => x - y));
    // b's first session record lies between a's first lines.
    const firstB = lines.indexOf(files.b[0]!);
    expect(firstB).toBeGreaterThan(0);
    expect(firstB).toBeLessThan(lines.indexOf(files.a[files.a.length - 1]!));
    // The exported page holds them in the same order.
    let exported = "";
    const stdout = new Writable({ write: (chunk: Buffer, _enc, done) => ((exported += chunk.toString()), done()) });
    const code = await exportHtml([path.join(tmp, "a.ndjson"), path.join(tmp, "b.ndjson")], "-", {}, { stdout, stderr: new PassThrough(), stdin: new PassThrough() });
    expect(code).toBe(0);
    const embedded = /<script type="application\/json" id="wiretap-data">(.*?)<\/script>/s.exec(exported)![1]!;
    expect((JSON.parse(embedded) as Rec[]).map((r) => JSON.stringify(r))).toEqual(lines);
  });

  it("shows times in local time or UTC by the toggle, and remembers the choice", async () => {
    await clickTab(page, "messages");
    await setFilter(page, "method:initialize");
    const firstTime = (): Promise<string> => page.$eval(".list .row .c-time", (e) => e.textContent ?? "");
    await waitInPage(page, `document.querySelectorAll(".list .row").length === 2`, "the two initialize rows");
    // 09:30 UTC is 15:00 in Kolkata (+05:30).
    expect(await firstTime()).toBe("15:00:00.000");
    await page.click(".utc-toggle");
    await waitInPage(page, `document.querySelector(".list .row .c-time").textContent === "09:30:00.000"`, "the time in UTC");
    await page.reload();
    await waitInPage(page, `document.querySelector(".status .count")?.textContent.includes("${all.length} records")`, "the page again");
    await setFilter(page, "method:initialize");
    await waitInPage(page, `document.querySelectorAll(".list .row").length === 2`, "the two initialize rows again");
    expect(await firstTime()).toBe("09:30:00.000");
    await setFilter(page, "");
  });

  it("draws one bar per call on the timeline, the refused call marked, progress as ticks", async () => {
    await clickTab(page, "timeline");
    await waitInPage(page, `document.querySelectorAll(".timeline [data-call]").length === ${requests.length}`, "a bar per call");
    const bars = await page.$$eval(".timeline [data-call]", (els) => els.map((e) => ({ call: e.getAttribute("data-call"), outcome: e.getAttribute("data-outcome") })));
    expect(new Set(bars.map((b) => b.call))).toEqual(new Set(requests.map(({ r }) => `${r.flow as string}#${r.id as number}`)));
    expect(bars.filter((b) => b.outcome === "denied").map((b) => b.call)).toEqual(["fa-denied#90"]);
    // An error answer and an isError result are errors; the cancelled call is its own.
    expect(bars.filter((b) => b.outcome === "error").map((b) => b.call).sort()).toEqual(["fa-12#12", "fa-21#21"]);
    expect(bars.filter((b) => b.outcome === "cancelled").map((b) => b.call)).toEqual(["fb-7#7"]);
    // Three long-running calls overlap the others: they get lanes of their own.
    const lanes = await page.$$eval(".timeline [data-call] rect.bar", (els) => new Set(els.map((e) => e.getAttribute("y"))).size);
    expect(lanes).toBeGreaterThanOrEqual(3);
    // A tick per progress notification, on its call's bar; none elsewhere.
    const progressed = all.filter(({ r }) => r.method === "notifications/progress");
    expect(await page.$$eval(".timeline [data-progress]", (els) => els.length)).toBe(progressed.length);
    for (const key of ["fa-5#5", "fa-14#14", "fa-23#23"]) {
      const geometry = await page.$eval(`[data-call="${key}"]`, (g) => ({
        bar: [Number(g.querySelector("rect")!.getAttribute("x")), Number(g.querySelector("rect")!.getAttribute("width"))],
        ticks: [...g.querySelectorAll("[data-progress]")].map((t) => Number(t.getAttribute("x1"))),
      }));
      expect(geometry.ticks).toHaveLength(3);
      for (const x of geometry.ticks) expect(x > geometry.bar[0]! && x < geometry.bar[0]! + geometry.bar[1]!).toBe(true);
    }
  });

  it("draws a call's flood of progress notifications as at most one tick per pixel of its bar", async () => {
    // A hostile server's progress notifications on one call, far more than its bar has pixels: one SVG line
    // each (redrawn with every feed batch) hangs the tab as they grow.
    const at = (ms: number): string => new Date(Date.parse("2026-11-27T10:00:00.000Z") + ms).toISOString();
    const base = { level: "info", event: "rpc", server: "127.0.0.1:9443", session: "flood", transport: "streamable-http", path: "/mcp", decision: { action: "allow", enforced: false, rules: [] } };
    const lines = [JSON.stringify({ ...base, time: at(0), flow: "ff-1", id: 1, method: "tools/call", tool: "flood", direction: "client_to_server", kind: "request", params: { name: "flood", arguments: {} } })];
    for (let i = 0; i < 5_000; i++) lines.push(JSON.stringify({ ...base, time: at(1 + i), flow: `ff-p${i}`, id: null, method: "notifications/progress", tool: null, direction: "server_to_client", kind: "notification", related: { id: 1, method: "tools/call", tool: "flood" }, params: { progressToken: 1, progress: i } }));
    lines.push(JSON.stringify({ ...base, time: at(6_000), flow: "ff-1", id: 1, method: "tools/call", tool: "flood", direction: "server_to_client", kind: "response", latencyMs: 6_000, result: { content: [] } }));
    await writeFile(path.join(tmp, "flood.ndjson"), lines.join("\n") + "\n");
    const done = new AbortController();
    let ready: string | undefined;
    const flood = uiCommand([path.join(tmp, "flood.ndjson")], { uiPort: 0, follow: false }, { signal: done.signal, onReady: (u) => (ready = u) });
    const p = await browser.newPage();
    try {
      await waitUntil(() => ready !== undefined, { timeoutMs: 10_000, what: "the UI server" });
      await p.setViewport({ width: 1280, height: 620 });
      await p.goto(ready!);
      await waitInPage(p, `document.querySelector(".status .count")?.textContent.includes("${lines.length} records")`, "the flood loaded", 30_000);
      await clickTab(p, "timeline");
      await waitInPage(p, `document.querySelector('.timeline [data-call="ff-1#1"] rect')`, "the flooded call's bar", 30_000);
      const width = await p.$eval('.timeline [data-call="ff-1#1"] rect', (r) => Number(r.getAttribute("width")));
      const ticks = (await p.evaluate(`document.querySelectorAll(".timeline [data-progress]").length`)) as number;
      expect(ticks).toBeGreaterThan(0);
      expect(ticks).toBeLessThanOrEqual(Math.ceil(width) + 1);
    } finally {
      await p.close();
      done.abort();
      await flood;
    }
  }, 60_000);

  it("names a call on hover and opens it in the detail pane on click", async () => {
    await page.hover(`[data-call="fa-5#5"] rect`);
    const tip = await waitInPage<string>(page, `document.querySelector(".timeline-tip")?.textContent`, "the hover text");
    expect(tip).toContain("tools/call trigger-long-running-operation · 2.60 s · ok · 3 progress notifications");
    await page.screenshot({ path: shotPath("timeline.png"), clip: { x: 0, y: 0, width: 1280, height: 230 } });
    await page.hover(`[data-call="fa-denied#90"] rect`);
    await waitInPage(page, `document.querySelector(".timeline-tip")?.textContent.includes("denied (no-env: reads the environment)")`, "the refused call's reason");
    await page.click(`[data-call="fa-denied#90"] rect`);
    const detail = await waitInPage<string>(page, `document.querySelector(".detail")?.textContent`, "the detail pane");
    expect(detail).toContain("get-env");
    expect(detail).toContain("denied");
    // Counts read as written: `{ 1 key`, never `1 keys`; a session of one lane says so.
    expect(detail).toMatch(/\b1 key\b/);
    expect(detail).not.toMatch(/\b1 keys\b/);
    expect(await page.$$eval(".band text", (t) => t.map((e) => e.textContent?.split(" · ")[1]))).toEqual(["2 lanes", "1 lane"]);
    await page.click(".detail .close");
  });

  it("zooms in with the buttons: fewer calls in view, each still its own bar", async () => {
    const inView = (): Promise<number> => page.$eval(".timeline-count", (e) => Number(/(\d+) in view/.exec(e.textContent ?? "")![1]));
    expect(await inView()).toBe(requests.length);
    for (let i = 0; i < 3; i++) await page.click(`.timeline-bar button[title^="zoom in"]`);
    await waitInPage(page, `Number(/(\\d+) in view/.exec(document.querySelector(".timeline-count").textContent)[1]) < ${requests.length}`, "a zoomed view");
    expect(await page.$$eval(".timeline [data-cluster]", (els) => els.length)).toBe(0);
    await page.click(`.timeline-bar button[title="the whole capture"]`);
    expect(await inView()).toBe(requests.length);
    // The wheel zooms around the pointer; dragging pans (the axis moves with it).
    const lanes = (await (await page.$(".timeline-lanes"))!.boundingBox())!;
    await page.mouse.move(lanes.x + lanes.width / 2, lanes.y + 20);
    await page.mouse.wheel({ deltaY: -600 });
    await waitInPage(page, `Number(/(\\d+) in view/.exec(document.querySelector(".timeline-count").textContent)[1]) < ${requests.length}`, "the wheel's zoom");
    const firstTick = (): Promise<string> => page.$eval(".timeline-axis text", (t) => t.textContent ?? "");
    const before = await firstTick();
    await page.mouse.down();
    await page.mouse.move(lanes.x + lanes.width / 2 - 300, lanes.y + 20, { steps: 5 });
    await page.mouse.up();
    expect(await firstTick()).not.toBe(before);
    await page.click(`.timeline-bar button[title="the whole capture"]`);
  });

  it("charts each tool's latencies and calls over time, their bars adding up to its calls", async () => {
    await clickTab(page, "tool stats");
    await waitInPage(page, `document.querySelectorAll("table.stats tr[data-tool] .bins-latency").length > 0`, "the charts");
    const tools = await page.$$eval("table.stats tr[data-tool]", (rows) =>
      rows.map((r) => ({
        tool: r.getAttribute("data-tool"),
        calls: Number(r.querySelector(".calls")!.textContent),
        latency: [...r.querySelectorAll(".bins-latency rect.bin")].map((b) => ({ bin: b.getAttribute("data-bin"), count: Number(b.getAttribute("data-count")) })),
        overTime: [...r.querySelectorAll(".bins-time rect.bin")].map((b) => Number(b.getAttribute("data-count"))),
      })),
    );
    const callsOf = (tool: string): number => requests.filter(({ r }) => r.method === "tools/call" && r.tool === tool).length;
    expect(tools.map((t) => t.tool).sort()).toEqual(["echo", "get-env", "get-sum", "get-tiny-image", "trigger-long-running-operation"]);
    for (const t of tools) {
      expect(t.calls).toBe(callsOf(t.tool!));
      expect(t.latency.reduce((n, b) => n + b.count, 0)).toBe(t.calls);
      expect(t.overTime.reduce((n, c) => n + c, 0)).toBe(t.calls);
    }
    expect(tools.find((t) => t.tool === "trigger-long-running-operation")!.latency).toEqual([{ bin: "2 s–5 s", count: 3 }]);
    // The cancelled get-sum and the refused get-env have no latency: a bar of their own.
    expect(tools.find((t) => t.tool === "get-sum")!.latency.at(-1)).toEqual({ bin: "no latency", count: 1 });
    expect(tools.find((t) => t.tool === "get-env")!.latency).toEqual([{ bin: "no latency", count: 1 }]);
    // The token estimates the page asked for when the tab opened, in the picture too.
    await waitInPage(page, `document.querySelector('table.stats tr[data-tool="echo"] .result-tokens')?.textContent`, "echo's result tokens");
    await page.screenshot({ path: shotPath("tool-charts.png"), clip: { x: 0, y: 0, width: 1280, height: 300 } });
  });

  it("downloads what the filter shows: NDJSON as logged, HAR, the HTML page; each behind the token", async () => {
    await setFilter(page, "tool:echo");
    await page.click(".downloads summary");
    const href = (format: string): Promise<string> => page.$eval(`.downloads a[data-format="${format}"]`, (a) => a.getAttribute("href") ?? "");
    const ndjson = (await page.evaluate(`fetch(${JSON.stringify(await href("ndjson"))}).then((r) => r.text())`)) as string;
    const served = ((await page.evaluate(`fetch("/api/records").then((r) => r.text())`)) as string).trim().split("\n");
    const isEcho = (r: Rec): boolean => r.event === "rpc" && (r.tool === "echo" || r.related?.tool === "echo");
    const expected = served.filter((l) => isEcho(JSON.parse(l) as Rec));
    expect(expected.length).toBeGreaterThan(20);
    expect(ndjson).toBe(expected.map((l) => `${l}\n`).join(""));
    // The same messages as the list without grouping.
    await page.click(".toggle input[type=checkbox]");
    await waitInPage(page, `document.querySelector(".status .count").textContent.startsWith("${expected.length} shown")`, "the ungrouped list");
    await page.click(".toggle input[type=checkbox]");

    const har = JSON.parse((await page.evaluate(`fetch(${JSON.stringify(await href("har"))}).then((r) => r.text())`)) as string) as { log: { entries: { request: { headers: { name: string; value: string }[] } }[] } };
    const echoFlows = new Set(all.filter(({ r }) => isEcho(r) && r.kind !== "notification").map(({ r }) => r.flow));
    expect(har.log.entries).toHaveLength(echoFlows.size);
    expect(har.log.entries[0]!.request.headers).toContainEqual({ name: "authorization", value: "Bearer [redacted]" });
    const html = (await page.evaluate(`fetch(${JSON.stringify(await href("html"))}).then((r) => r.text())`)) as string;
    expect(html).toContain('<script type="application/json" id="wiretap-data">');
    expect(html).not.toContain('"tool":"get-sum"');
    // With the token estimates of what it holds: echo's results only.
    const tokens = JSON.parse(/<script type="application\/json" id="wiretap-tokens">(.*?)<\/script>/s.exec(html)![1]!) as { encoding: string; byAddress: { tools: { tool: string }[] }[] };
    expect(tokens.encoding).toBe("o200k_base");
    expect(tokens.byAddress.flatMap((a) => a.tools.map((t) => t.tool))).toEqual(["echo"]);

    // Without the token (the page's cookie), nothing; a filter it cannot read is said.
    const download = new URL(await href("ndjson"), "http://127.0.0.1");
    expect((await get(download.pathname + download.search, {})).status).toBe(401);
    const cookie = { Cookie: `mcp_wiretap_ui_${url.port}=${url.searchParams.get("token")}` };
    expect((await get(`${download.pathname}?q=status:nope`, cookie)).status).toBe(400);
    expect((await get(`/api/download/other.txt`, cookie)).status).toBe(404);
    // A page on another port of 127.0.0.1 is the same site: the browser sends it the cookie (cookies ignore
    // ports) on an <img>, a no-cors fetch or a navigation, which would save the records into Downloads.
    for (const p of [download.pathname + download.search, "/api/records", "/"]) expect((await get(p, { ...cookie, "Sec-Fetch-Site": "same-site" })).status, p).toBe(403);
    expect((await get(download.pathname + download.search, { ...cookie, "Sec-Fetch-Site": "same-origin" })).status).toBe(200);
    await setFilter(page, "");
  });
});

function get(pathname: string, headers: Record<string, string>): Promise<{ status: number }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: "127.0.0.1", port: Number(url.port), path: pathname, headers, timeout: 5_000 }, (res) => {
      resolve({ status: res.statusCode ?? 0 });
      res.destroy();
    });
    req.on("error", reject);
  });
}
