/**
 * A first `GET /api/tokens` on a live UI server (the process that may be the proxy) never stalls its event
 * loop: the tokenizer's tables load, and a large text is counted, off the main thread. What is measured is
 * the main thread's own CPU time between two ticks of a 1 ms timer (its longest synchronous block), not
 * wall time, so a loaded machine that leaves the process waiting for a core does not count against it.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { RecordHistory } from "../../../src/ui/server/record-history.js";
import { startUiServer, type RunningUi } from "../../../src/ui/server/ui-server.js";
import type { UiTokenReport } from "../../../src/tokens/tokens-in-turns.js";
import { longestStep } from "../../helpers/longest-step.js";

let ui: RunningUi;

beforeAll(async () => {
  const history = new RecordHistory(1000, 64 << 20);
  const rpc = (fields: Record<string, unknown>): string => JSON.stringify({ level: "info", time: "2026-11-28T04:00:00.000Z", event: "rpc", server: "127.0.0.1:9001", session: "s", transport: "streamable-http", decision: { action: "allow", enforced: false, rules: [] }, flow: "f1", id: 1, tool: "fetch", method: "tools/call", ...fields });
  // One result of 2 MB of varied words: counted on the main thread, some hundreds of ms of one block.
  const words = Array.from({ length: 300_000 }, (_, i) => `w${(i * 7919) % 100_003}`).join(" ");
  history.append(rpc({ kind: "request", direction: "client_to_server", params: { name: "fetch", arguments: { url: "https://example.test/" } } }));
  history.append(rpc({ kind: "response", direction: "server_to_client", latencyMs: 3, result: { content: [{ type: "text", text: words }] } }));
  ui = await startUiServer({ port: 0, history, source: { kind: "live", follow: true, description: "live proxy" } });
});

afterAll(async () => {
  await ui?.close();
});

it("a first count of a large text leaves the proxy's loop free (longest block under 100 ms)", async () => {
  const u = new URL(ui.url);
  const cookie = ((await fetch(u, { redirect: "manual" })).headers.get("set-cookie") ?? "").split(";")[0]!;
  let value: { status: number; report: UiTokenReport } | undefined;
  const blockMs = await longestStep(async () => {
    const res = await fetch(`${u.protocol}//${u.host}/api/tokens`, { headers: { cookie } });
    value = { status: res.status, report: (await res.json()) as UiTokenReport };
  });
  if (!value) throw new Error("no answer");
  expect(value.status).toBe(200);
  const results = value.report.byAddress[0]!.tools[0]!.results;
  expect(results.max).toBeGreaterThan(300_000);
  expect(blockMs).toBeLessThan(100);
});
