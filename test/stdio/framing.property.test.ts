/**
 * The records of a stdio launch must not depend on how the pipe happened to cut the bytes: any split of
 * the same streams into reads gives the same records and forwards the same bytes, in monitor and in
 * enforce mode. The tap is driven by hand (no process), with the real tracker, policy and record writer.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { recordingPipeline } from "../pipeline/pipeline-fixtures.js";
import { capturingStdioTap } from "../helpers/capturing-stdio-tap.js";
import { policyFrom } from "../policy/policy-fixtures.js";

const line = (v: unknown, end = "\n"): string => JSON.stringify(v) + end;
const MAX_INSPECT = 300;

const TOO_LARGE = line({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "echo", arguments: { message: "y".repeat(400) } } });

/** Client → server: a BOM, CRLF, a blank line, a line that is not JSON, one too large, a batch. */
const FROM_CLIENT = Buffer.concat([
  Buffer.from("\ufeff" + line({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "c", version: "1" } } }, "\r\n")),
  Buffer.from(line({ jsonrpc: "2.0", method: "notifications/initialized" })),
  Buffer.from("\n"),
  Buffer.from(line({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "echo", arguments: { message: "naïve café — 日本語 🙂" }, _meta: { progressToken: "t" } } })),
  Buffer.from("not json at all\n"),
  Buffer.from(TOO_LARGE),
  Buffer.from(line({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "secret_tool", arguments: {} } })),
  Buffer.from(line([{ jsonrpc: "2.0", id: 5, method: "ping" }, { jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 2 } }])),
  // The last line ends the stream unterminated.
  Buffer.from(JSON.stringify({ jsonrpc: "2.0", id: 6, method: "tools/list" })),
]);

/** Server → client: responses, a progress, a stray line, a line too large, bad UTF-8. */
const FROM_SERVER = Buffer.concat([
  Buffer.from(line({ jsonrpc: "2.0", id: 1, result: { protocolVersion: "2025-06-18", capabilities: {}, serverInfo: { name: "s", version: "1" } } })),
  Buffer.from(line({ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: "t", progress: 1, total: 2 } }, "\r\n")),
  Buffer.from("debug: stray output\n"),
  Buffer.from(line({ jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text: "z".repeat(500) }] } })),
  Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":5,"result":{"note":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}}\n')]),
  Buffer.from(line({ jsonrpc: "2.0", id: 6, result: { tools: [{ name: "echo", inputSchema: { type: "object" } }] } })),
]);

const POLICY = (mode: "monitor" | "enforce"): string => `mode: ${mode}
rules:
  - name: no-secret-tool
    action: deny
    match: { tool: secret_tool }
`;

interface Run {
  records: unknown[];
  toServer: Buffer;
  toClient: Buffer;
}

/** Feeds both streams in the given pieces, interleaved as the reads would come, and collects the output. */
function run(mode: "monitor" | "enforce", clientCuts: number[], serverCuts: number[]): Run {
  const policy = policyFrom(POLICY(mode));
  const { pipeline, records } = recordingPipeline(policy, {
    payloads: { payloads: "truncated", maxPayloadBytes: 1000 },
    now: () => 0,
    // The session table keeps its own clock: its duration is not part of the comparison.
    session: (r) => ({ ...r, durationMs: undefined }),
  });
  const { tap, toServer, toClient } = capturingStdioTap(pipeline, { maxInspectBytes: MAX_INSPECT, mode });
  const client = pieces(FROM_CLIENT, clientCuts);
  const server = pieces(FROM_SERVER, serverCuts);
  // Client lines first, then the server's: the order a real exchange has them in (answers after requests).
  for (const p of client) tap.fromClient(p);
  tap.clientEnded();
  for (const p of server) tap.fromServer(p);
  tap.serverEnded();
  pipeline.tracker.close();
  return { records, toServer: Buffer.concat(toServer), toClient: Buffer.concat(toClient) };
}

function pieces(bytes: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let from = 0;
  for (const p of [...points, bytes.length]) {
    out.push(bytes.subarray(from, p));
    from = p;
  }
  return out;
}

const cuts = fc.array(fc.nat({ max: 5000 }), { maxLength: 40 });

describe("stdio framing: any split of the streams gives the same records", () => {
  for (const mode of ["monitor", "enforce"] as const) {
    it(`${mode} mode`, () => {
      const whole = run(mode, [], []);
      fc.assert(
        fc.property(cuts, cuts, (c, s) => {
          const split = run(mode, c, s);
          expect(split.records).toEqual(whole.records);
          expect(split.toServer.equals(whole.toServer)).toBe(true);
          expect(split.toClient.equals(whole.toClient)).toBe(true);
        }),
        { numRuns: 150 },
      );
    });
  }

  it("one byte per read gives the same records as one read", () => {
    const bytewise = (b: Buffer): number[] => Array.from({ length: b.length }, (_, i) => i);
    const whole = run("enforce", [], []);
    const split = run("enforce", bytewise(FROM_CLIENT), bytewise(FROM_SERVER));
    expect(split.records).toEqual(whole.records);
  });

  it("monitor mode forwards every byte unchanged; the records say what each line was", () => {
    const r = run("monitor", [], []);
    expect(r.toServer.equals(FROM_CLIENT)).toBe(true);
    expect(r.toClient.equals(FROM_SERVER)).toBe(true);
    const rpc = r.records.filter((x): x is Record<string, unknown> => (x as { event?: string }).event === "rpc");
    const summary = rpc.map((x) => `${String(x.direction).slice(0, 6)} ${String(x.kind)} ${String(x.id)} ${String(x.method)}`);
    expect(summary).toEqual([
      "client request 1 initialize",
      "client notification null notifications/initialized",
      "client request 2 tools/call",
      "client invalid null null",
      "client invalid null null",
      "client request 4 tools/call",
      "client request 5 ping",
      "client notification null notifications/cancelled",
      "client request 6 tools/list",
      "server response 1 initialize",
      "server notification null notifications/progress",
      "server invalid null null",
      "server invalid null null",
      "server response 5 ping",
      "server response 6 tools/list",
      "client unanswered 4 tools/call",
    ]);
    const reasons = rpc.filter((x) => x.kind === "invalid").map((x) => x.reason);
    expect(reasons).toEqual([
      expect.stringMatching(/^line is not JSON/),
      `line of ${Buffer.byteLength(TOO_LARGE)} bytes is larger than --max-inspect-bytes (300): forwarded uninspected`,
      expect.stringMatching(/^line is not JSON/),
      expect.stringMatching(/^line of \d+ bytes is larger than --max-inspect-bytes \(300\): forwarded uninspected$/),
    ]);
    // Read leniently, the bad-UTF-8 answer keeps its method and says what was wrong.
    expect(rpc.find((x) => x.id === 5 && x.direction === "server_to_client")).toMatchObject({ method: "ping", reason: expect.stringMatching(/not valid UTF-8/) });
  });

  it("enforce mode: what reaches the server is only what was judged and allowed", () => {
    const r = run("enforce", [], []);
    const sent = r.toServer.toString("utf8").split("\n").filter((l) => l.trim() !== "");
    expect(sent.map((l) => JSON.parse(l.replace(/^\ufeff/, "")) as unknown)).toEqual([
      expect.objectContaining({ id: 1, method: "initialize" }),
      expect.objectContaining({ method: "notifications/initialized" }),
      expect.objectContaining({ id: 2 }),
      [expect.objectContaining({ id: 5 }), expect.objectContaining({ method: "notifications/cancelled" })],
      expect.objectContaining({ id: 6 }),
    ]);
    const answers = r.toClient.toString("utf8").split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as { id: unknown; error?: { code: number } });
    // Errors for the unreadable, too large and denied lines; the bad-UTF-8 answer to 5 replaced by an error.
    expect(answers.filter((a) => a.error).map((a) => [a.id, a.error!.code])).toEqual([
      [null, -32052],
      [3, -32052],
      [4, -32051],
      [5, -32052],
    ]);
  });
});
