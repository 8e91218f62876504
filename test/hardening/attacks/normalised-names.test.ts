/**
 * A denied tool (or method) spelled so that an exact match misses it but a server that normalises the names
 * it dispatches on (trim, drop control or invisible characters, fold case, NFKC) still runs it. Judged
 * through the production pipeline and the stdio transport's real framing, in enforce mode: the call never
 * reaches the server; in monitor mode it is forwarded and its record says which rule the normalised name hit.
 */
import { describe, expect, it } from "vitest";
import { StdioTap } from "../../../src/stdio/stdio-tap.js";
import { policyFrom } from "../../policy/policy-fixtures.js";
import { recordingPipeline } from "../../pipeline/pipeline-fixtures.js";

const RULES = "rules:\n  - { name: no-delete, action: deny, match: { tool: delete_everything } }\n  - { name: no-sampling, action: deny, match: { method: sampling/createMessage } }\n";

function run(mode: "enforce" | "monitor", line: string): { toServer: string; records: Record<string, unknown>[] } {
  const policy = policyFrom(`mode: ${mode}\n${RULES}`);
  const { pipeline, records } = recordingPipeline(policy, { payloads: { payloads: "truncated", maxPayloadBytes: 1000 } });
  const toServer: Buffer[] = [];
  const tap = new StdioTap({
    pipeline,
    server: "stdio:test",
    session: "stdio-1",
    maxInspectBytes: 1 << 20,
    ...(mode === "enforce" ? { enforce: { removeDeniedTools: true } } : {}),
    toServer: (b) => toServer.push(Buffer.from(b)),
    toClient: () => {},
    onError: (err) => {
      throw err;
    },
  });
  tap.fromClient(Buffer.from(`${line}\n`));
  tap.clientEnded();
  tap.serverEnded();
  pipeline.tracker.close();
  return { toServer: Buffer.concat(toServer).toString(), records };
}

const call = (name: string, method = "tools/call"): string => JSON.stringify({ jsonrpc: "2.0", id: 7, method, params: { name, arguments: {} } });

describe("names a lenient server normalises", () => {
  for (const [label, line] of [
    ["upper case", call("Delete_Everything")],
    ["a trailing space", call("delete_everything ")],
    ["a NUL at the end", call("delete_everything\u0000")],
    ["a zero-width space inside", call("delete\u200b_everything")],
    ["full-width letters (NFKC)", call("ｄｅｌｅｔｅ_everything")],
    ["the method in upper case", call("delete_everything", "Tools/Call")],
    ["a denied method with a trailing space", JSON.stringify({ jsonrpc: "2.0", id: 8, method: "sampling/createMessage ", params: {} })],
  ] as const) {
    it(`${label}: denied in enforce mode, never forwarded`, () => {
      const { toServer, records } = run("enforce", line);
      expect(toServer).toBe("");
      expect(records.find((r) => r.event === "rpc" && r.kind === "request")).toMatchObject({ decision: { action: "deny", enforced: true } });
    });
  }

  it("monitor mode forwards it and records the rule the normalised name hit", () => {
    const { toServer, records } = run("monitor", call("Delete_Everything"));
    expect(toServer).toContain("Delete_Everything");
    expect(records.find((r) => r.event === "rpc" && r.kind === "request")).toMatchObject({ tool: "Delete_Everything", decision: { action: "deny", enforced: false, rules: [{ name: "no-delete", action: "deny" }] } });
  });

  it("a name already in normal form is judged once, as it is", () => {
    const { toServer, records } = run("enforce", call("echo"));
    expect(toServer).toContain('"echo"');
    expect(records.find((r) => r.event === "rpc" && r.kind === "request")).toMatchObject({ decision: { action: "allow" } });
  });
});
