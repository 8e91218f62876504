/**
 * `replay` of a 2026-07-28 (stateless) call: no handshake, the mirrored headers sent, the replay's client
 * info in `_meta`; a multi-round call replays its first round, and `--input` answers it.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fetch as undiciFetch, ProxyAgent } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { json, rpcResult, startScriptedUpstream, type ScriptedRequest, type ScriptedUpstream } from "../helpers/scripted-mcp-upstream.js";
import { readRecords, runCli, startTestProxy, testCaFile } from "../helpers/proxy-harness.js";
import { copyOfCapture } from "./capture-copy.js";

const REVISION = "2026-07-28";
const META = { "io.modelcontextprotocol/protocolVersion": REVISION, "io.modelcontextprotocol/clientInfo": { name: "stateless-client", version: "1" } };

let dir: string;
let upstream: ScriptedUpstream;
let capture: string;
let caDir: string;

/** The server: `ask` asks for input once (then echoes what it got); `echo` echoes. */
function serve(req: ScriptedRequest, res: import("node:http").ServerResponse): void {
  const m = req.json as { id: number | string; params: { name: string; arguments?: Record<string, unknown>; inputResponses?: unknown; requestState?: unknown } };
  if (m.params.name === "ask" && m.params.inputResponses === undefined) {
    return json(res, rpcResult(m.id, { resultType: "input_required", inputRequests: { who: { method: "elicitation/create", params: { message: "who?" } } }, requestState: "state-1" }));
  }
  const text = m.params.name === "ask" ? `answered ${JSON.stringify(m.params.inputResponses)} with ${String(m.params.requestState)}` : `Echo: ${String(m.params.arguments?.message)}`;
  json(res, rpcResult(m.id, { resultType: "complete", content: [{ type: "text", text }] }));
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "mcp-wiretap-replay-stateless-"));
  caDir = path.join(dir, "ca");
  capture = path.join(dir, "capture.ndjson");
  upstream = await startScriptedUpstream();
  upstream.route("POST", "/mcp", serve);
  const proxy = await startTestProxy({ logFile: capture, caDir });
  const dispatcher = new ProxyAgent({ uri: proxy.url, requestTls: { ca: proxy.caPem } });
  try {
    for (const [id, name, args] of [[1, "echo", { message: "hello" }], [2, "ask", {}]] as const) {
      const res = await undiciFetch(`${upstream.url}/mcp`, {
        method: "POST",
        dispatcher,
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", "mcp-protocol-version": REVISION, "mcp-method": "tools/call", "mcp-name": name },
        body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args, _meta: META } }),
      });
      await res.text();
    }
  } finally {
    await dispatcher.close();
    await proxy.stop("captured");
  }
}, 30_000);

afterAll(async () => {
  await upstream?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});


const replay = (args: string[]) => runCli(["replay", ...args, "--upstream-ca", testCaFile(), "--ca-dir", caDir, "--yes"], { timeoutMs: 30_000 });

describe("replay under the stateless revision", () => {
  it("sends the call alone, with Mcp-Method, Mcp-Name and MCP-Protocol-Version matching the body, the replay named in _meta", async () => {
    const log = copyOfCapture(capture, "echo");
    const seen = upstream.requests.length;
    const run = await replay([log, "--last", "tool:echo", "--set", 'arguments.message="again"']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("Echo: again");
    const sent = upstream.requests.slice(seen);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.headers).toMatchObject({ "mcp-method": "tools/call", "mcp-name": "echo", "mcp-protocol-version": REVISION });
    const meta = (sent[0]!.json as { params: { _meta: Record<string, unknown> } }).params._meta;
    expect(meta["io.modelcontextprotocol/protocolVersion"]).toBe(REVISION);
    expect(meta["io.modelcontextprotocol/clientInfo"]).toMatchObject({ name: "mcp-wiretap-replay" });
    const request = (await readRecords(log)).find((r) => r.replayOf !== undefined && r.event === "rpc" && r.kind === "request")!;
    expect(request.headerMismatch).toBeUndefined();
  });

  it("a call that asks for input: the first round is shown with what to pass; --input answers it, requestState echoed", async () => {
    const log = copyOfCapture(capture, "ask");
    const first = await replay([log, "--last", "tool:ask"]);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain('"input_required"');
    expect(first.stderr).toContain("--input FILE");
    const input = path.join(dir, "input.json");
    writeFileSync(input, JSON.stringify({ who: { action: "accept", content: { name: "me" } } }));
    const second = await replay([log, "--last", "tool:ask", "--input", input]);
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('answered {\\"who\\":{\\"action\\":\\"accept\\",\\"content\\":{\\"name\\":\\"me\\"}}} with state-1');
    const rounds = (await readRecords(log)).filter((r) => r.replayOf !== undefined && r.event === "rpc" && r.kind === "request" && r.tool === "ask");
    expect(rounds.map((r) => r.round ?? 1)).toEqual([1, 1, 2]);
    expect(rounds.every((r) => r.roundProblem === undefined)).toBe(true);
  });
});
