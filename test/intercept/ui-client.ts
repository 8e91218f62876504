import http from "node:http";

/** A page's side of the intercept API, driven from a test: the cookie, the page's token and nonce, and the calls. */
export interface UiSession {
  base: string;
  cookie: string;
  token: string;
  nonce: string;
}

/** Loads the page as a browser would (token in the URL → cookie), and reads the token and nonce it carries. */
export async function openUi(url: string): Promise<UiSession & { page: string }> {
  const u = new URL(url);
  const first = await fetch(u, { redirect: "manual" });
  const cookie = (first.headers.get("set-cookie") ?? "").split(";")[0]!;
  const base = `${u.protocol}//${u.host}`;
  const page = await (await fetch(`${base}/`, { headers: { cookie } })).text();
  const token = /name="wiretap-token" content="([^"]*)"/.exec(page)?.[1] ?? "";
  const nonce = /name="wiretap-nonce" content="([^"]*)"/.exec(page)?.[1] ?? "";
  return { base, cookie, token, nonce, page };
}

export interface HeldItem {
  hold: string;
  method?: string;
  tool?: string;
  direction: string;
  message: unknown;
}

export async function heldList(ui: UiSession): Promise<HeldItem[]> {
  const res = await fetch(`${ui.base}/api/intercept`, { headers: { cookie: ui.cookie } });
  return ((await res.json()) as { held: HeldItem[] }).held;
}

/** Waits until `count` messages are held (bounded). */
export async function waitHeld(ui: UiSession, count = 1, timeoutMs = 10_000): Promise<HeldItem[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const held = await heldList(ui);
    if (held.length >= count) return held;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${count} held message(s); held: ${JSON.stringify(held)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * POSTs a release as the page does; `headers` overrides or removes (undefined) what the page sends. Sent with
 * node:http, which (unlike fetch) sends any Host and Origin given.
 */
export function release(ui: UiSession, body: unknown, headers: Record<string, string | undefined> = {}, method = "POST"): Promise<{ status: number; text: string }> {
  const u = new URL(ui.base);
  const all: Record<string, string | undefined> = {
    host: u.host,
    cookie: ui.cookie,
    origin: ui.base,
    "content-type": "application/json",
    "x-wiretap-token": ui.token,
    "x-wiretap-nonce": ui.nonce,
    ...headers,
  };
  const sent = Object.fromEntries(Object.entries(all).filter((e): e is [string, string] => e[1] !== undefined));
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: Number(u.port), path: "/api/action/release", method, headers: sent }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
    });
    req.on("error", reject);
    req.setTimeout(5_000, () => req.destroy(new Error("release: no answer in 5 s")));
    req.end(method === "GET" || body === undefined ? undefined : JSON.stringify(body));
  });
}
