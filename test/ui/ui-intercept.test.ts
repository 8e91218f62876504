/**
 * Intercept in a real browser (headless chromium): the SDK client's echo call through the proxy is held, the
 * page lists it, a person edits the JSON and presses "edit then forward", and the server answers the edit. A page
 * on another origin, even one that knows the page's token and nonce, cannot release anything. The same browser,
 * upstream and foreign page then run the Replay cases (replay-cases.ts) against a proxy of their own.
 */
import http from "node:http";
import type { Browser, Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectStreamable, type ConnectedClient } from "../helpers/mcp-client.js";
import { startMcpUpstream, type McpUpstream } from "../helpers/mcp-upstream.js";
import { startTestProxy, type TestProxy } from "../helpers/proxy-harness.js";
import { heldList, openUi, release, waitHeld, type UiSession } from "../intercept/ui-client.js";
import { launchBrowser, postFromForeignPage, waitInPage } from "./browser.js";
import { replayCases } from "./replay-cases.js";

let upstream: McpUpstream;
let proxy: TestProxy;
let client: ConnectedClient<unknown>;
let browser: Browser;
let page: Page;
let uiUrl: string;
let api: UiSession;
let foreign: http.Server;

beforeAll(async () => {
  upstream = await startMcpUpstream();
  proxy = await startTestProxy({ uiPort: 0, payloads: "full", intercept: { filter: "tool:echo", timeoutMs: 30_000 } });
  uiUrl = /UI: (http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]+)/.exec(proxy.banner)![1]!;
  api = await openUi(uiUrl);
  client = await connectStreamable(upstream.streamableUrl, { proxyUrl: proxy.url, caPem: proxy.caPem });
  browser = await launchBrowser();
  page = await browser.newPage();
  await page.goto(uiUrl);
  foreign = http.createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end("<!doctype html><title>elsewhere</title>");
  });
  await new Promise<void>((resolve) => foreign.listen(0, "127.0.0.1", resolve));
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await client?.client.close();
  await proxy?.stop();
  await upstream?.close();
  await new Promise((resolve) => foreign?.close(resolve));
});

const text = (result: unknown): string => ((result as { content: { text: string }[] }).content[0]?.text ?? "");

describe("intercept in the web UI", () => {
  it("lists the held call; edit then forward sends the edit, and the client gets the server's answer to it", async () => {
    const call = client.client.callTool({ name: "echo", arguments: { message: "from the agent" } });
    await waitInPage(page, `document.querySelector(".held-item textarea")?.value.includes("from the agent")`, "the held call in the page");
    expect(await page.$eval(".held-head", (e) => e.textContent ?? "")).toContain("echo");
    await page.$eval(".held-item textarea", (t) => {
      const area = t as unknown as { value: string; dispatchEvent(e: unknown): boolean };
      area.value = area.value.replace("from the agent", "typed in the UI");
      area.dispatchEvent(new Event("input", { bubbles: true }));
    });
    await page.click(".held-item button.edit");
    // The server's answer (an SSE event) is held in turn: forwarded as it is.
    await waitInPage(page, `document.querySelector(".held-item textarea")?.value.includes("Echo: typed in the UI")`, "the held answer in the page");
    await page.click(".held-item button.forward");
    expect(text(await call)).toBe("Echo: typed in the UI");
    await waitInPage(page, `document.querySelector(".held-item") === null`, "the held list to empty");
    const [record, answer] = await proxy.waitForRecords((r) => r.event === "intercept", 2);
    expect(record).toMatchObject({ action: "edited", edited: { params: { arguments: { message: "typed in the UI" } } } });
    expect(answer).toMatchObject({ action: "forwarded", direction: "server_to_client" });
  });

  it("copy JSON gives the message as the edit sent it; copy as curl a command that sends it again", async () => {
    await page.type(".filter", "tool:echo");
    await waitInPage(page, `[...document.querySelectorAll(".list .row .c-tool")].some((c) => c.textContent === "echo")`, "the echo row");
    const rows = await page.$$(".list .row");
    await rows[rows.length - 1]!.click();
    await waitInPage(page, `document.querySelector(".detail .copy-json")`, "the copy buttons");
    await page.click(".detail .copy-json");
    const copied = await waitInPage<string>(page, `document.querySelector(".detail .copied")?.value`, "the copied JSON");
    expect(JSON.parse(copied)).toMatchObject({ jsonrpc: "2.0", method: "tools/call", params: { name: "echo", arguments: { message: "typed in the UI" } } });
    await page.click(".detail .copy-curl");
    await waitInPage(page, `document.querySelector(".detail .copied")?.value.startsWith("curl ")`, "the curl command");
    const curl = await page.$eval(".detail .copied", (t) => (t as unknown as { value: string }).value);
    expect(curl).toContain(`https://${new URL(upstream.streamableUrl).host}/mcp`);
    expect(curl).toContain("mcp-session-id: ");
    await page.$eval(".filter", (f) => ((f as unknown as { value: string }).value = ""));
  });

  it("a page on another origin cannot release a held call, even knowing the page's token and nonce", async () => {
    const call = client.client.callTool({ name: "echo", arguments: { message: "held while a foreign page tries" } });
    const [held] = await waitHeld(api);
    const body = JSON.stringify({ hold: held!.hold, action: "edit", message: { jsonrpc: "2.0", id: 99, method: "tools/call", params: { name: "echo", arguments: { message: "forged" } } } });
    const foreignUrl = `http://127.0.0.1:${(foreign.address() as { port: number }).port}/`;
    const outcome = await postFromForeignPage(browser, foreignUrl, `${api.base}/api/action/release`, body, api.token, api.nonce);
    expect(outcome[0]).toBe("json:blocked");
    // Still held, untouched: the server has not seen it.
    expect((await heldList(api)).map((h) => h.hold)).toEqual([held!.hold]);
    expect((await release(api, { hold: held!.hold, action: "forward" })).status).toBe(200);
    const [answer] = await waitHeld(api);
    expect((await release(api, { hold: answer!.hold, action: "forward" })).status).toBe(200);
    expect(text(await call)).toBe("Echo: held while a foreign page tries");
  });
});

replayCases(() => ({ browser, upstream, foreign }));
