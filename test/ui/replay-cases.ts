/**
 * The web UI's Replay cases (run from test/ui/ui-intercept.test.ts, whose browser they share): the SDK client's
 * echo call through the proxy (`start --ui`) is edited in the page and replayed; the page shows the new answer
 * beside the original with their diff, and the log holds the replay's records with replayOf. A page on another
 * origin, a GET, a rebinding Host and a read-only UI (`ui FILE`) cannot replay.
 */
import { copyFile, mkdtemp, rm } from "node:fs/promises";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import type { Browser, Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { uiCommand } from "../../src/ui/server/serve-logs.js";
import { connectStreamable, type ConnectedClient } from "../helpers/mcp-client.js";
import { startMcpUpstream, type McpUpstream } from "../helpers/mcp-upstream.js";
import { readRecords, startTestProxy, testCaFile, type TestProxy } from "../helpers/proxy-harness.js";
import { openUi, type UiSession } from "../intercept/ui-client.js";
import { postFromForeignPage, waitInPage } from "./browser.js";

export interface SharedParts {
  browser: Browser;
  upstream: McpUpstream;
  /** A page server on another origin of 127.0.0.1. */
  foreign: http.Server;
}

/**
 * Replay and Edit and replay in a real browser, on the browser, upstream and foreign page server the
 * calling test file shares (test/ui/ui-intercept.test.ts): a proxy of its own with --ui and no intercept.
 */
export function replayCases(shared: () => SharedParts): void {
  describe("replay in the web UI", () => {
    let upstream: McpUpstream;
    let browser: Browser;
    let foreign: http.Server;
    let proxy: TestProxy;
    let client: ConnectedClient<unknown>;
    let page: Page;
    let api: UiSession;

    beforeAll(async () => {
      ({ browser, upstream, foreign } = shared());
      proxy = await startTestProxy({ uiPort: 0, payloads: "full" });
      const uiUrl = /UI: (http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]+)/.exec(proxy.banner)![1]!;
      api = await openUi(uiUrl);
      client = await connectStreamable(upstream.streamableUrl, { proxyUrl: proxy.url, caPem: proxy.caPem });
      await client.client.listTools();
      await client.client.callTool({ name: "echo", arguments: { message: "as captured" } });
      page = await browser.newPage();
      await page.setViewport({ width: 1400, height: 900 });
      await page.goto(uiUrl);
    }, 60_000);

    afterAll(async () => {
      await page?.close();
      await client?.client.close();
      await proxy?.stop();
    });

    const initializes = (): number => upstream.counters.byMethod.get("initialize") ?? 0;

    /** The captured echo request's `<flow>#<id>`, from the log. */
    async function echoSelector(): Promise<string> {
      const request = await proxy.waitForRecord((r) => r.event === "rpc" && r.kind === "request" && r.tool === "echo" && r.replayOf === undefined);
      return `${String(request.flow)}#${String(request.id)}`;
    }

    /** Opens the detail of the first echo request in the list (the captured one). */
    async function openEcho(p: Page): Promise<void> {
      await p.type(".filter", "tool:echo");
      await waitInPage(p, `[...document.querySelectorAll(".list .row .c-tool")].some((c) => c.textContent === "echo")`, "the echo row");
      const rows = await p.$$(".list .row");
      await rows[0]!.click();
      await waitInPage(p, `document.querySelector(".detail .copy-json")`, "the detail pane");
    }

    async function setParams(p: Page, text: string): Promise<void> {
      await p.$eval(
        ".replay-params",
        (t, value) => {
          const area = t as unknown as { value: string; dispatchEvent(e: unknown): boolean };
          area.value = value as string;
          area.dispatchEvent(new Event("input", { bubbles: true }));
        },
        text,
      );
    }

    it("a page on another origin cannot replay, even knowing the page's token and nonce", async () => {
      const selector = await echoSelector();
      const before = initializes();
      const body = JSON.stringify({ call: selector, params: { name: "echo", arguments: { message: "forged" } }, confirmed: true });
      const foreignUrl = `http://127.0.0.1:${(foreign.address() as { port: number }).port}/`;
      const outcome = await postFromForeignPage(browser, foreignUrl, `${api.base}/api/action/replay`, body, api.token, api.nonce);
      expect(outcome[0]).toBe("json:blocked");
      // Each request was answered before the fetch resolved (a replay is done before its answer): none reached the server.
      expect(initializes()).toBe(before);
      expect((await proxy.records()).some((r) => r.params !== undefined && JSON.stringify(r.params).includes("forged"))).toBe(false);
    });

    it("refuses a GET, a rebinding Host and a request without the page's nonce", async () => {
      const selector = await echoSelector();
      const port = Number(new URL(api.base).port);
      const body = JSON.stringify({ call: selector, confirmed: true });
      const headers = { cookie: api.cookie, origin: api.base, "content-type": "application/json", "x-wiretap-token": api.token, "x-wiretap-nonce": api.nonce };
      const before = initializes();
      expect(await raw(port, "GET", headers)).toBe(405);
      expect(await raw(port, "POST", { ...headers, host: `rebound.example:${port}` }, body)).toBe(403);
      expect(await raw(port, "POST", { ...headers, "x-wiretap-nonce": "not-a-page-nonce" }, body)).toBe(403);
      expect(await raw(port, "POST", { ...headers, origin: "http://127.0.0.1:1" }, body)).toBe(403);
      expect(initializes()).toBe(before);
    });

    it("an edit the tool's inputSchema refuses shows the error; a JSON error disables Send", async () => {
      await openEcho(page);
      await page.click(".detail .replay-edit");
      await waitInPage(page, `document.querySelector(".replay-schema.ok")`, "the captured params checked against the schema");
      await setParams(page, JSON.stringify({ name: "echo", arguments: { message: 42 } }));
      const shown = await waitInPage<string>(page, `document.querySelector(".replay-schema.invalid")?.textContent`, "the schema error");
      expect(shown).toContain("arguments.message: must be string");
      expect(await page.$eval(".replay-send", (b) => (b as unknown as { disabled: boolean }).disabled)).toBe(false);
      await setParams(page, `{"name": "echo", "arguments": {`);
      await waitInPage(page, `document.querySelector(".replay-schema.invalid")?.textContent.startsWith("not JSON")`, "the JSON error");
      expect(await page.$eval(".replay-send", (b) => (b as unknown as { disabled: boolean }).disabled)).toBe(true);
    });

    it("edit and replay of echo shows the new answer beside the original with the diff, recorded with replayOf", async () => {
      const selector = await echoSelector();
      await setParams(page, JSON.stringify({ name: "echo", arguments: { message: "edited in the page" } }));
      await waitInPage(page, `document.querySelector(".replay-schema.ok")`, "the edit checked");
      await page.type(".replay-header", "Authorization: Bearer typed-secret-for-this-replay-only");
      await page.click(".replay-send");
      const diff = await waitInPage<string>(page, `document.querySelector(".replay-result .replay-diff")?.textContent`, "the replay's answer and diff", 20_000);
      expect(diff).toContain("-");
      expect(diff).toMatch(/^-.*Echo: as captured/m);
      expect(diff).toMatch(/^\+.*Echo: edited in the page/m);
      expect(await page.$eval(".replay-side", (e) => e.textContent ?? "")).toContain("Echo: edited in the page");
      // The replay is in the feed (the list shows a second echo request).
      await waitInPage(page, `[...document.querySelectorAll(".list .row .c-tool")].filter((c) => c.textContent === "echo").length === 2`, "the replay in the feed");
      expect(await page.$eval(".list .row:last-child .replay-mark", (e) => e.getAttribute("title"))).toBe(`replay of ${selector}`);
      const [request] = await proxy.waitForRecords((r) => r.event === "rpc" && r.kind === "request" && r.method === "tools/call" && r.replayOf === selector, 1);
      expect(request!.params).toMatchObject({ name: "echo", arguments: { message: "edited in the page" } });
      const log = JSON.stringify(await proxy.records());
      expect(log).not.toContain("typed-secret-for-this-replay-only");
      expect(await page.content()).not.toContain("typed-secret-for-this-replay-only");
    });

    it("a UI of saved logs (ui FILE) shows no Replay and its endpoint refuses", async () => {
      const stop = new AbortController();
      const url = await new Promise<string>((resolve, reject) => {
        uiCommand([proxy.logFile], { uiPort: 0 }, { signal: stop.signal, onReady: resolve }).catch(reject);
      });
      try {
        const readOnly = await browser.newPage();
        await readOnly.goto(url);
        await openEcho(readOnly);
        expect(await readOnly.$(".replay-run")).toBeNull();
        await readOnly.close();
        const ui = await openUi(url);
        const selector = await echoSelector();
        const before = initializes();
        const res = await fetch(`${ui.base}/api/action/replay`, {
          method: "POST",
          headers: { cookie: ui.cookie, origin: ui.base, "content-type": "application/json", "x-wiretap-token": ui.token, "x-wiretap-nonce": ui.nonce },
          body: JSON.stringify({ call: selector, confirmed: true }),
        });
        expect(res.status).toBe(403);
        expect(initializes()).toBe(before);
      } finally {
        stop.abort();
      }
    });

    it("ui FILE --allow-replay replays into FILE; a tool not marked read-only needs the confirmation first", async () => {
      await client.client.callTool({ name: "toggle-simulated-logging", arguments: {} });
      await client.client.callTool({ name: "toggle-simulated-logging", arguments: {} });
      const toggle = await proxy.waitForRecord((r) => r.event === "rpc" && r.kind === "response" && r.tool === "toggle-simulated-logging");
      const selector = `${String(toggle.flow)}#${String(toggle.id)}`;
      const tmp = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-ui-replay-"));
      const log = path.join(tmp, "capture.ndjson");
      await copyFile(proxy.logFile, log);
      const stop = new AbortController();
      try {
        const url = await new Promise<string>((resolve, reject) => {
          uiCommand([log], { uiPort: 0, allowReplay: true, caDir: proxy.caDir, upstreamCa: [testCaFile()], insecureUpstream: false }, { signal: stop.signal, onReady: resolve }).catch(reject);
        });
        const ui = await openUi(url);
        expect(ui.page).toContain('name="wiretap-replay"');
        const post = async (action: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> => {
          const res = await fetch(`${ui.base}/api/action/${action}`, {
            method: "POST",
            headers: { cookie: ui.cookie, origin: ui.base, "content-type": "application/json", "x-wiretap-token": ui.token, "x-wiretap-nonce": ui.nonce },
            body: JSON.stringify(body),
          });
          return { status: res.status, body: (await res.json()) as Record<string, unknown> };
        };
        const check = await post("replay-check", { call: selector });
        expect(check.body.confirm).toMatchObject({ tool: "toggle-simulated-logging", destructive: false });
        const unconfirmed = await post("replay", { call: selector });
        expect(unconfirmed.status).toBe(409);
        expect(String(unconfirmed.body.error)).toContain("toggle-simulated-logging");
        expect((await readRecords(log)).some((r) => r.replayOf === selector)).toBe(false);
        const done = await post("replay", { call: selector, confirmed: true });
        expect(done).toMatchObject({ status: 200, body: { ok: true, replayOf: selector, answered: "result" } });
        const records = await readRecords(log);
        expect(records.filter((r) => r.replayOf === selector && r.kind === "request" && r.method === "tools/call")).toHaveLength(1);
      } finally {
        stop.abort();
        await rm(tmp, { recursive: true, force: true });
      }
    });
  });
}

function raw(port: number, method: string, headers: Record<string, string>, body?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, method, path: "/api/action/replay", headers }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("error", reject);
    req.end(body);
  });
}
