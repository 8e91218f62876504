/**
 * Headless Debian chromium driven by puppeteer-core, for the web UI's tests. `npm test` installs the
 * browser where missing (scripts/ensure-test-deps.sh, run by pretest).
 */
import { existsSync } from "node:fs";
import puppeteer, { type Browser, type Page } from "puppeteer-core";

export const CHROMIUM = process.env.MCP_WIRETAP_CHROMIUM ?? "/usr/bin/chromium";

export async function launchBrowser(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: run scripts/ensure-test-deps.sh as root (apt-get install chromium), or set MCP_WIRETAP_CHROMIUM`);
  }
  const root = process.getuid?.() === 0;
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [...(root ? ["--no-sandbox"] : []), "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"],
    protocolTimeout: 60_000,
  });
}

/** Waits for `fn` (run in the page) to return a truthy value. */
export async function waitInPage<T>(page: Page, fn: string, what: string, timeoutMs = 15_000): Promise<T> {
  try {
    const handle = await page.waitForFunction(fn, { timeout: timeoutMs, polling: 50 });
    return (await handle.jsonValue()) as T;
  } catch (err) {
    throw new Error(`timed out waiting for ${what}: ${(err as Error).message}`);
  }
}

/** The messages list's rows in view, as text cells. */
export function visibleRows(page: Page): Promise<{ tool: string; method: string; status: string; session: string; server: string; text: string }[]> {
  return page.$$eval(".list .row", (rows) =>
    rows.map((r) => ({
      tool: r.querySelector(".c-tool")?.textContent ?? "",
      session: r.querySelector(".c-session")?.textContent ?? "",
      server: r.querySelector(".c-server")?.textContent ?? "",
      method: r.querySelector(".c-method")?.textContent ?? "",
      status: r.querySelector(".c-status")?.textContent ?? "",
      text: r.textContent ?? "",
    })),
  );
}

/** Clicks the header tab named `name`. */
export async function clickTab(p: Page, name: string): Promise<void> {
  const tabs = await p.$$("button.tab");
  for (const t of tabs) if ((await t.evaluate((e) => e.textContent)) === name) await t.click();
}

/** Replaces what the filter box holds with `text`, typed. */
export async function setFilter(p: Page, text: string): Promise<void> {
  await p.click("input[type=search]", { count: 3 });
  await p.keyboard.press("Backspace");
  if (text) await p.keyboard.type(text);
}

/**
 * What a page on another origin (`foreignUrl`) gets when it posts `body` to the UI's action `url`, with the
 * cookie: once with the action's JSON headers, token and nonce (a preflight the UI refuses: `json:blocked`),
 * once as a simple request (no preflight; the answer is opaque: `simple:opaque`, the server must refuse it).
 */
export async function postFromForeignPage(browser: Browser, foreignUrl: string, url: string, body: string, token: string, nonce: string): Promise<string[]> {
  const evil = await browser.newPage();
  try {
    await evil.goto(foreignUrl);
    return await evil.evaluate(
      async (target: string, text: string, t: string, n: string) => {
        const tried: string[] = [];
        try {
          const r = await fetch(target, { method: "POST", credentials: "include", headers: { "content-type": "application/json", "x-wiretap-token": t, "x-wiretap-nonce": n }, body: text });
          tried.push(`json:${r.status}`);
        } catch {
          tried.push("json:blocked");
        }
        try {
          const r = await fetch(target, { method: "POST", mode: "no-cors", credentials: "include", headers: { "content-type": "text/plain" }, body: text });
          tried.push(`simple:${r.type}`);
        } catch {
          tried.push("simple:blocked");
        }
        return tried;
      },
      url,
      body,
      token,
      nonce,
    );
  } finally {
    await evil.close();
  }
}
