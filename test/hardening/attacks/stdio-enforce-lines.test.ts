/**
 * The stdio shim in enforce mode against a client that writes a denied call in pieces: a byte at a time,
 * a line exactly at --max-inspect-bytes and one byte over it (with LF and with CRLF), the denied call hidden
 * after the first JSON value of a line, a line ended by a lone CR. No byte of a denied or unjudged line may
 * reach the server.
 */
import { describe, expect, it } from "vitest";
import { capturingStdioTap } from "../../helpers/capturing-stdio-tap.js";
import { policyFrom } from "../../policy/policy-fixtures.js";
import { recordingPipeline } from "../../pipeline/pipeline-fixtures.js";

const LIMIT = 300;
const policy = policyFrom("mode: enforce\nrules:\n  - { name: no-delete, action: deny, match: { tool: delete_everything } }\n");

function run(pieces: Buffer[]): { toServer: string; toClient: string } {
  const { pipeline } = recordingPipeline(policy, { payloads: { payloads: "truncated", maxPayloadBytes: 1000 } });
  const { tap, toServer, toClient } = capturingStdioTap(pipeline, { maxInspectBytes: LIMIT, mode: "enforce" });
  for (const p of pieces) tap.fromClient(p);
  tap.clientEnded();
  tap.serverEnded();
  pipeline.tracker.close();
  return { toServer: Buffer.concat(toServer).toString(), toClient: Buffer.concat(toClient).toString() };
}

/** A denied call padded (in an argument) to exactly `size` bytes, line end excluded. */
function deniedOf(size: number): string {
  const bare = (pad: string): string => JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "delete_everything", arguments: { pad } } });
  return bare("p".repeat(size - bare("").length));
}

const bytewise = (text: string): Buffer[] => [...Buffer.from(text)].map((b) => Buffer.from([b]));

describe("stdio enforce mode: lines written to slip a denied call through", () => {
  for (const [name, text] of [
    ["a denied call written a byte at a time", `${deniedOf(120)}\n`],
    ["a denied call exactly at the limit", `${deniedOf(LIMIT)}\n`],
    ["a denied call one byte over the limit (LF)", `${deniedOf(LIMIT + 1)}\n`],
    ["a denied call at the limit with CRLF", `${deniedOf(LIMIT)}\r\n`],
    ["a denied call one byte over the limit with CRLF", `${deniedOf(LIMIT + 1)}\r\n`],
    ["a denied call after an allowed value on one line", `{"jsonrpc":"2.0","id":1,"method":"ping"}${deniedOf(120)}\n`],
    ["a denied call ended by a lone CR, then an allowed line", `${deniedOf(120)}\r{"jsonrpc":"2.0","id":2,"method":"ping"}\n`],
    ["a denied call as the unterminated last line", deniedOf(120)],
  ] as const) {
    it(`${name}: never reaches the server`, () => {
      for (const pieces of [[Buffer.from(text)], bytewise(text)]) {
        const { toServer } = run(pieces);
        expect(toServer).not.toContain("delete_everything");
      }
    });
  }

  it("an allowed call at the limit, written a byte at a time, does reach the server (the harness sees forwarding)", () => {
    const allowed = `${deniedOf(LIMIT).replace("delete_everything", "echo_everything__")}\n`;
    expect(run(bytewise(allowed)).toServer).toBe(allowed);
  });
});
