/**
 * Who may release a held message: only this UI server's own page (token and page nonce in headers, its own
 * Origin, a POST of JSON). A foreign page, a rebinding host, a form post or a read-only UI changes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HoldQueue, type HoldOutcome } from "../../src/intercept/hold-queue.js";
import { Interceptor } from "../../src/intercept/interceptor.js";
import type { Judged } from "../../src/mcp/rpc-event.js";
import { RecordHistory } from "../../src/ui/server/record-history.js";
import { startUiServer, type RunningUi } from "../../src/ui/server/ui-server.js";
import { exportedPage } from "../../src/ui/server/assets.js";
import { heldList, openUi, release, type UiSession } from "./ui-client.js";

let live: RunningUi;
let readOnly: RunningUi;
let queue: HoldQueue;
let interceptor: Interceptor;
let ui: UiSession;
const records: Record<string, unknown>[] = [];

beforeAll(async () => {
  queue = new HoldQueue({ maxBytes: 1 << 20, maxEntries: 16, timeoutMs: 60_000 });
  interceptor = new Interceptor({ filter: () => true, queue, write: (r) => void records.push(r), scrub: (r) => r, payloads: { payloads: "full", maxPayloadBytes: 65536 }, maxEditBytes: 4096 });
  live = await startUiServer({ port: 0, history: new RecordHistory(1000, 1 << 20), source: { kind: "live", follow: true, description: "live proxy" }, intercept: interceptor });
  readOnly = await startUiServer({ port: 0, history: new RecordHistory(1000, 1 << 20), source: { kind: "files", follow: false, description: "capture.ndjson" } });
  ui = await openUi(live.url);
});

afterAll(async () => {
  queue.dropAll();
  await live?.close();
  await readOnly?.close();
});

/** Holds one message; the promise settles with what was done to it. */
function holdOne(): { hold: string; done: Promise<HoldOutcome["action"]> } {
  const before = new Set(queue.list().map((e) => e.hold));
  const judged = [{ event: { kind: "request", direction: "client_to_server", id: 1, method: "tools/call", tool: "echo" }, decision: { action: "allow", enforced: false, rules: [] } }] as unknown as Judged[];
  const done = interceptor.hold({ flow: "f", peer: "client 127.0.0.1", server: "127.0.0.1:1", session: null, transport: "stdio" }, judged, { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", arguments: { message: "hi" } } });
  const hold = queue.list().find((e) => !before.has(e.hold))!.hold;
  return { hold, done: done.then((r) => (r.send === "original" ? "forwarded" : r.send === "edited" ? "edited" : r.action)) };
}

describe("releasing a held message: only the page of this server", () => {
  it("the page carries its token and a nonce; with both, its Origin and a JSON POST, the release is done", async () => {
    expect(ui.token).not.toBe("");
    expect(ui.nonce).not.toBe("");
    const { hold, done } = holdOne();
    expect((await heldList(ui)).map((h) => h.hold)).toContain(hold);
    expect((await release(ui, { hold, action: "forward" })).status).toBe(200);
    expect(await done).toBe("forwarded");
  });

  const refused: [string, Record<string, string | undefined>, number, string?][] = [
    ["a page on another origin", { origin: "http://evil.example" }, 403],
    ["another port of this host (another origin)", { origin: "http://127.0.0.1:1" }, 403],
    ["no Origin at all", { origin: undefined }, 403],
    ["a cross-site fetch", { "sec-fetch-site": "cross-site" }, 403],
    ["a same-site but not same-origin fetch", { "sec-fetch-site": "same-site" }, 403],
    ["a rebinding Host (an attacker's name resolving to loopback)", { host: "attacker.example" }, 403],
    ["no nonce", { "x-wiretap-nonce": undefined }, 403],
    ["a nonce this server never served", { "x-wiretap-nonce": "AAAAAAAAAAAAAAAAAAAAAAAA" }, 403],
    ["no token header (the cookie alone, as a form post would carry it)", { "x-wiretap-token": undefined }, 403],
    ["a form post (text/plain)", { "content-type": "text/plain" }, 415],
    ["no cookie", { cookie: undefined }, 401],
  ];
  it.each(refused)("refuses %s, and the message stays held", async (_what, headers, status) => {
    const { hold, done } = holdOne();
    const answer = await release(ui, { hold, action: "forward" }, headers);
    expect(answer.status).toBe(status);
    expect((await heldList(ui)).map((h) => h.hold)).toContain(hold);
    queue.settle(hold, { action: "dropped" });
    expect(await done).toBe("dropped");
  });

  it("refuses a GET (and so a link or an image) with 405", async () => {
    const { hold, done } = holdOne();
    expect((await release(ui, undefined, {}, "GET")).status).toBe(405);
    expect((await fetch(`${ui.base}/api/action/release?hold=${hold}&action=forward`, { headers: { cookie: ui.cookie } })).status).toBe(405);
    expect((await heldList(ui)).map((h) => h.hold)).toContain(hold);
    queue.settle(hold, { action: "dropped" });
    await done;
  });

  it("a preflight from a foreign page is refused (no CORS grant), so its browser never sends the action", async () => {
    const res = await fetch(`${ui.base}/api/action/release`, { method: "OPTIONS", headers: { cookie: ui.cookie, origin: "http://evil.example", "access-control-request-method": "POST", "access-control-request-headers": "x-wiretap-nonce" } });
    expect(res.status).toBe(403);
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
  });

  it("a UI of saved logs is read-only: its page has no token nor nonce, and an action is refused", async () => {
    const ro = await openUi(readOnly.url);
    expect(ro.token).toBe("");
    expect(ro.nonce).toBe("");
    // Even with this server's own token (from its banner URL) in the header: no nonce was ever issued.
    const token = new URL(readOnly.url).searchParams.get("token")!;
    const answer = await release({ ...ro, token, nonce: "x" }, { hold: "1", action: "forward" });
    expect(answer.status).toBe(403);
  });

  it("an exported page carries neither token nor nonce", () => {
    const page = exportedPage([], "capture");
    expect(page).not.toMatch(/<meta name="wiretap-(token|nonce)"/);
  });
});
