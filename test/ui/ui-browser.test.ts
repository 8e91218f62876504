/**
 * The web UI in a real browser (headless Debian chromium): the CLI proxy with --ui, the official SDK
 * client calling server-everything through it while the page is open; the server's refusals; the
 * exported page opened from file://.
 */
import http from "node:http";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { Browser, Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { startCliProxy, type CliProxy } from "../helpers/cli-proxy.js";
import { connectSse, connectStreamable, createDispatcher, fetchVia, type ConnectedClient } from "../helpers/mcp-client.js";
import { startMcpUpstream, type McpUpstream } from "../helpers/mcp-upstream.js";
import { REPO_ROOT, runCli } from "../helpers/proxy-harness.js";
import { buildCalls } from "../../src/analysis/calls.js";
import type { LogRecord } from "../../src/saved-logs/filters.js";
import { tokenCosts } from "../../src/tokens/token-costs.js";
import { loadTokenCounter } from "../../src/tokens/token-counter.js";
import { clickTab, launchBrowser, setFilter, visibleRows, waitInPage } from "./browser.js";

const HOSTILE = `<img src=x onerror="window.__pwned=1">`;

let upstream: McpUpstream;
let proxy: CliProxy;
let browser: Browser;
let page: Page;
let uiUrl: URL;
let client: ConnectedClient<unknown> | undefined;
let tmp: string;
/** The tools/list tokens the live page showed, for the exported page to match. */
let liveListTotal = "";

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-ui-"));
  upstream = await startMcpUpstream();
  proxy = await startCliProxy(["--ui-port", "0", "--payloads", "full"]);
  const [, url] = await proxy.cli.waitForStderr(/^ {2}UI: (http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]+)$/m, 20_000);
  uiUrl = new URL(url!);
  browser = await launchBrowser();
  page = await browser.newPage();
  await page.setViewport({ width: 1400, height: 760 });
  await page.goto(uiUrl.href);
}, 60_000);

afterAll(async () => {
  await client?.close();
  await browser?.close();
  await proxy?.dispose();
  await upstream?.close();
  if (tmp) await rm(tmp, { recursive: true, force: true });
});

const base = (): string => `http://127.0.0.1:${uiUrl.port}`;

describe("web UI, live", () => {
  it("trades the token in the URL for an HttpOnly, SameSite=Strict cookie and drops it from the address", async () => {
    expect(page.url()).toBe(`${base()}/`);
    const cookies = await browser.cookies();
    const cookie = cookies.find((c) => c.name === `mcp_wiretap_ui_${uiUrl.port}`);
    expect(cookie?.httpOnly).toBe(true);
    expect(cookie?.sameSite).toBe("Strict");
  });

  it("shows the session and its tools/call rows as the SDK client makes them", async () => {
    client = await connectStreamable(upstream.streamableUrl, { proxyUrl: proxy.url, caPem: proxy.caPem, clientName: "ui-test-client" });
    await client.client.listTools();
    await client.client.callTool({ name: "echo", arguments: { message: "hello from the ui test" } });
    await client.client.callTool({ name: "echo", arguments: { message: "second echo" } });
    await client.client.callTool({ name: "get-sum", arguments: { a: 2, b: 3 } });
    await client.client.callTool({ name: HOSTILE, arguments: {} }).catch(() => undefined);
    await waitInPage(page, `[...document.querySelectorAll(".list .row .c-tool")].filter((c) => c.textContent === "echo").length === 2`, "two echo rows");
    await waitInPage(page, `[...document.querySelectorAll(".list .row .c-tool")].some((c) => c.textContent === "get-sum")`, "the get-sum row");
    const rows = await visibleRows(page);
    expect(rows.filter((r) => r.method === "tools/call" && r.tool === "echo").every((r) => r.status === "ok")).toBe(true);
    // Each row names its session (the start of its id) and its server.
    const echoRow = rows.find((r) => r.method === "tools/call" && r.tool === "echo")!;
    expect(echoRow.server).toBe(`127.0.0.1:${upstream.port}`);
    expect((client.transport as { sessionId?: string }).sessionId?.startsWith(echoRow.session)).toBe(true);
    expect(echoRow.session.length).toBeGreaterThanOrEqual(8);

    await clickTab(page, "sessions");
    const session = await waitInPage<string>(page, `document.querySelector("table.sessions tbody")?.textContent`, "the session row");
    expect(session).toContain("ui-test-client");
    expect(session).toContain("mcp-servers/everything");
    expect(session).toContain("streamable-http");
    await clickTab(page, "messages");
  });

  it("names a legacy SSE session by its sessionId, not its /message?sessionId= endpoint", async () => {
    const sse = await connectSse(upstream.sseUrl, { proxyUrl: proxy.url, caPem: proxy.caPem, clientName: "ui-sse-client" });
    try {
      await clickTab(page, "sessions");
      const cells = await waitInPage<string[]>(page, `(() => { const rows = [...document.querySelectorAll("table.sessions tbody tr")].filter((r) => r.textContent.includes("ui-sse-client")); return rows.length ? [...rows[0].querySelectorAll("td")].map((td) => td.textContent) : null; })()`, "the SSE session row");
      const record = (await proxy.records()).find((r) => r.event === "session" && r.transport === "http+sse");
      const endpoint = String(record?.session);
      expect(cells[1]).toBe(new URLSearchParams(endpoint.slice(endpoint.indexOf("?") + 1)).get("sessionId"));
      await clickTab(page, "messages");
    } finally {
      await sse.close();
    }
  });

  it("filters with tail's tokens: tool:echo leaves only echo rows", async () => {
    await setFilter(page, "tool:echo");
    await waitInPage(page, `document.querySelectorAll(".list .row").length === 2`, "only the echo rows");
    const rows = await visibleRows(page);
    expect(rows.map((r) => r.tool)).toEqual(["echo", "echo"]);
  });

  it("opens a row (click or j/k and enter) and shows the result text", async () => {
    await page.click(".list .row");
    const detail = await waitInPage<string>(page, `document.querySelector(".detail")?.textContent`, "the detail pane");
    expect(detail).toContain("Echo: hello from the ui test");
    expect(detail).toContain("argsHash");
    await page.keyboard.press("Escape");
    await page.keyboard.press("j");
    await page.keyboard.press("Enter");
    const second = await waitInPage<string>(page, `document.querySelector(".detail")?.textContent`, "the second row's detail");
    expect(second).toContain("Echo: second echo");
    await setFilter(page, "");
    const rows = await page.$$(".list .row");
    for (const r of rows) if ((await r.$eval(".c-tool", (c) => c.textContent)) === "get-sum") await r.click();
    await waitInPage(page, `document.querySelector(".detail")?.textContent.includes("get-sum")`, "the get-sum detail");
    // The README's picture: refreshed with MCP_WIRETAP_UPDATE_SCREENSHOT=1 (a plain run leaves the tree clean).
    const shot = process.env.MCP_WIRETAP_UPDATE_SCREENSHOT === "1" ? path.join(REPO_ROOT, "docs", "ui.png") : path.join(tmp, "ui.png");
    await page.screenshot({ path: shot });
    await page.keyboard.press("Escape");
  });

  it("counts calls per tool in the statistics", async () => {
    await clickTab(page, "tool stats");
    await waitInPage(page, `document.querySelector('table.stats tr[data-tool="echo"] .calls')?.textContent === "2"`, "2 echo calls");
    expect(await page.$eval('table.stats tr[data-tool="get-sum"] .calls', (e) => e.textContent)).toBe("1");
    await clickTab(page, "messages");
  });

  it("shows token estimates (o200k_base) in the catalog and tool stats, as `stats --tokens` counts them", async () => {
    const served = ((await page.evaluate(`fetch("/api/records").then((r) => r.text())`)) as string).trim().split("\n");
    const records = served.map((l) => JSON.parse(l) as LogRecord);
    const expected = tokenCosts(records, buildCalls(records), await loadTokenCounter());
    const list = expected.lists.find((l) => l.addresses.includes(`127.0.0.1:${upstream.port}`))!;
    expect(list.tools.length).toBeGreaterThan(3);
    // The page stands where these records end: it asks for the count up to there.
    await waitInPage(page, `document.querySelector(".status .count")?.textContent.includes("${served.length} records")`, "every record in the page");
    await clickTab(page, "catalog");
    await waitInPage(page, `document.querySelector(".catalog .list-tokens")`, "the list's tokens");
    const listed = await page.$$eval(".catalog tr", (rows) => rows.map((r) => [r.querySelector(".tool-name")?.textContent, r.querySelector(".def-tokens")?.textContent]));
    expect(Object.fromEntries(listed)).toEqual(Object.fromEntries(list.tools.map((t) => [t.name, String(t.tokens)])));
    liveListTotal = (await page.$eval(".catalog .list-tokens", (e) => e.getAttribute("data-total")))!;
    expect(liveListTotal).toBe(String(list.total));
    expect(await page.$eval(".catalog .list-tokens", (e) => e.textContent)).toContain("estimated with o200k_base");

    await clickTab(page, "tool stats");
    await waitInPage(page, `document.querySelector('table.stats tr[data-tool="echo"] .result-tokens')?.textContent`, "the echo result tokens");
    const shown = await page.$$eval("table.stats tr[data-tool]", (rows) => rows.map((r) => [r.getAttribute("data-tool"), `${r.querySelector(".result-tokens")!.textContent} ${r.querySelector(".result-tokens-p95")!.textContent}`]));
    expect(Object.fromEntries(shown)).toEqual(Object.fromEntries(expected.tools.map((t) => [t.tool, `${t.results.mean ?? ""} ${t.results.p95 ?? ""}`])));
    expect(expected.tools.find((t) => t.tool === "echo")!.results.mean).toBeGreaterThan(0);
    expect(await page.$eval("table.stats .token-note", (e) => e.textContent)).toBe("Tokens estimated with o200k_base; other models count differently.");
    await clickTab(page, "messages");
  });

  it("renders a hostile tool name as text, never as HTML", async () => {
    await setFilter(page, "");
    const shown = await waitInPage<string>(
      page,
      `[...document.querySelectorAll(".list .row .c-tool")].map((c) => c.textContent).find((t) => t.startsWith("<img"))`,
      "the hostile tool's row",
    );
    expect(shown).toBe(HOSTILE);
    const row = await page.$$(".list .row");
    for (const r of row) if ((await r.$eval(".c-tool", (c) => c.textContent)) === HOSTILE) await r.click();
    await waitInPage(page, `document.querySelector(".detail")`, "the hostile row's detail");
    expect(await page.$$eval("img", (imgs) => imgs.length)).toBe(0);
    expect(await page.evaluate("window.__pwned")).toBeUndefined();
  });

  it("refuses a request without the token, with a foreign Host, and a feed or WebSocket from a foreign Origin", async () => {
    const cookie = `mcp_wiretap_ui_${uiUrl.port}=${uiUrl.searchParams.get("token")}`;
    expect((await get("/", {})).status).toBe(401);
    expect((await get("/api/records", {})).status).toBe(401);
    expect((await get("/api/records", { Cookie: `mcp_wiretap_ui_${uiUrl.port}=wrong` })).status).toBe(401);
    expect((await get("/api/tokens", {})).status).toBe(401);
    expect((await get(`/?token=${uiUrl.searchParams.get("token")}`, { Host: `rebind.example:${uiUrl.port}` })).status).toBe(403);
    expect((await get("/api/records", { Cookie: cookie, Host: `rebind.example:${uiUrl.port}` })).status).toBe(403);
    expect((await get("/api/records", { Cookie: cookie, Host: `localhost:${uiUrl.port}` })).status).toBe(200);
    expect((await get("/api/feed", { Cookie: cookie, Origin: "http://evil.example" })).status).toBe(403);
    const own = await get("/api/feed", { Cookie: cookie, Origin: base() });
    expect(own.status).toBe(200);
    expect(own.type).toBe("text/event-stream; charset=utf-8");
    const page0 = await get("/", { Cookie: cookie });
    expect(page0.status).toBe(200);
    expect(page0.csp).toContain("script-src 'self'");
    expect(page0.csp).toContain("default-src 'none'");
    expect(await wsStatus({ Cookie: cookie, Origin: "http://evil.example" })).toBe(403);
    expect(await wsStatus({ Cookie: cookie, Origin: base() })).not.toBe(101);
  });

  it("downloads hold what the log holds: a credential the client sent is in none of NDJSON, HAR and HTML", async () => {
    const secret = "sk-download-test-7f3a9c2e51d04b68";
    const send = fetchVia(createDispatcher({ proxyUrl: proxy.url, caPem: proxy.caPem }));
    const initialize = { jsonrpc: "2.0", id: 77, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "download-check", version: "1" } } };
    await (await send(upstream.streamableUrl, { method: "POST", headers: { authorization: `Bearer ${secret}`, "content-type": "application/json", accept: "application/json, text/event-stream" }, body: JSON.stringify(initialize) })).text();
    const download = (name: string): Promise<string> => page.evaluate(`fetch("/api/download/${name}?q=").then((r) => r.text())`) as Promise<string>;
    // The http record comes when the exchange ends, through the record stream: a moment after the answer.
    let har = "";
    for (let i = 0; i < 100 && !har.includes("download-check"); i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 100));
      har = await download("capture.har");
    }
    expect(har).toContain('"value": "Bearer [redacted]"');
    for (const name of ["records.ndjson", "capture.har", "capture.html"]) expect(await download(name)).not.toContain(secret);
  });

  it("exports one HTML page that opens from file:// with no network request and shows the same messages", async () => {
    const out = path.join(tmp, "capture.html");
    const result = await runCli(["export", "--html", out, proxy.logFile]);
    expect(result.code, result.stderr).toBe(0);
    const offline = await browser.newPage();
    const requests: string[] = [];
    offline.on("request", (r) => {
      if (r.url() !== pathToFileURL(out).href) requests.push(r.url());
    });
    await offline.goto(pathToFileURL(out).href);
    await waitInPage(offline, `document.querySelectorAll(".list .row").length > 0`, "rows in the exported page");
    const live = (await visibleRows(page)).map((r) => `${r.method} ${r.tool}`);
    const exported = (await visibleRows(offline)).map((r) => `${r.method} ${r.tool}`);
    expect(exported).toEqual(live);
    await setFilter(offline, "tool:echo");
    await waitInPage(offline, `document.querySelectorAll(".list .row").length === 2`, "the echo rows in the exported page");
    // The token estimates are in the page: no server to ask.
    await clickTab(offline, "catalog");
    expect(await waitInPage(offline, `document.querySelector(".catalog .list-tokens")?.getAttribute("data-total")`, "the list's tokens offline")).toBe(liveListTotal);
    expect(await offline.$$eval("img", (imgs) => imgs.length)).toBe(0);
    expect(requests).toEqual([]);
    await offline.close();
  });
});

describe("web UI, MCP Apps", () => {
  it("shows an app's HTML as source text in the detail, never rendered or run", async () => {
    const html = `<!doctype html><h1 id="app-heading">Map</h1>${HOSTILE}<script>window.__pwnedByApp = 1</script>`;
    const common = { level: "info", event: "rpc", flow: "f-app", transport: "streamable-http", server: "127.0.0.1:9", path: "/mcp", session: "s-app", protocolVersion: "2025-11-25", id: 1, method: "resources/read", tool: null, decision: { action: "allow", enforced: false, rules: [] } };
    const listing = { ...common, id: 0, method: "tools/list" };
    const records = [
      { ...listing, time: "2026-11-27T23:59:59.000Z", direction: "client_to_server", kind: "request", bytes: 40 },
      { ...listing, time: "2026-11-27T23:59:59.010Z", direction: "server_to_client", kind: "response", bytes: 90, latencyMs: 10, apps: [{ tool: "show-map", uri: "ui://maps/app.html" }], result: { tools: [{ name: "show-map", inputSchema: { type: "object" }, _meta: { ui: { resourceUri: "ui://maps/app.html" } } }] } },
      { ...common, time: "2026-11-28T00:00:00.000Z", direction: "client_to_server", kind: "request", bytes: 60, apps: [{ uri: "ui://maps/app.html" }], params: { uri: "ui://maps/app.html" } },
      { ...common, time: "2026-11-28T00:00:00.010Z", direction: "server_to_client", kind: "response", bytes: 200, latencyMs: 10, apps: [{ uri: "ui://maps/app.html", sha256: `sha256:${"0".repeat(64)}`, bytes: html.length }], result: { contents: [{ uri: "ui://maps/app.html", mimeType: "text/html;profile=mcp-app", text: html }] } },
    ];
    const log = path.join(tmp, "apps.ndjson");
    await writeFile(log, records.map((r) => JSON.stringify(r)).join("\n") + "\n");
    const out = path.join(tmp, "apps.html");
    const result = await runCli(["export", "--html", out, log]);
    expect(result.code, result.stderr).toBe(0);
    const offline = await browser.newPage();
    try {
      await offline.goto(pathToFileURL(out).href);
      await waitInPage(offline, `document.querySelectorAll(".list .row").length > 0`, "the app read's row");
      await setFilter(offline, "method:resources/read");
      await waitInPage(offline, `document.querySelectorAll(".list .row").length === 1`, "the app read's row alone");
      await offline.click(".list .row");
      const source = await waitInPage<string>(offline, `document.querySelector(".detail .app-source pre")?.textContent`, "the app's source");
      expect(source).toBe(html);
      expect(await offline.$eval(".detail", (d) => d.textContent)).toContain("ui://maps/app.html");
      expect(await offline.$$eval("img", (imgs) => imgs.length)).toBe(0);
      expect(await offline.$("#app-heading")).toBeNull();
      expect(await offline.evaluate("window.__pwned ?? window.__pwnedByApp")).toBeUndefined();
      await clickTab(offline, "catalog");
      await waitInPage(offline, `document.querySelector(".catalog .badge.app")?.textContent === "app ui://maps/app.html"`, "the app mark in the catalog");
    } finally {
      await offline.close();
    }
  });
});

function get(pathname: string, headers: Record<string, string>): Promise<{ status: number; type: string; csp: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: "127.0.0.1", port: Number(uiUrl.port), path: pathname, headers, timeout: 5_000 }, (res) => {
      resolve({ status: res.statusCode ?? 0, type: String(res.headers["content-type"] ?? ""), csp: String(res.headers["content-security-policy"] ?? "") });
      res.destroy();
    });
    req.on("error", reject);
  });
}

function wsStatus(headers: Record<string, string>): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(`ws://127.0.0.1:${uiUrl.port}/api/feed`, { headers, handshakeTimeout: 5_000 });
    ws.on("open", () => {
      ws.close();
      resolve(101);
    });
    ws.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
    ws.on("error", () => resolve(0));
  });
}
