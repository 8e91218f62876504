/**
 * A judgement that throws never lets a message through unjudged. The policy is real (built by the
 * production factory) with one content detector that throws on a marker; enforce mode refuses the message
 * with its own error (-32053) and a record that says why, monitor mode forwards it and records the error.
 * Over HTTP (the proxy in-process, a scripted upstream) and over stdio (the tap with the production pipeline).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { JUDGEMENT_FAILED_CODE } from "../../src/mcp/jsonrpc.js";
import { createPolicy } from "../../src/policy/create-policy.js";
import { detectors } from "../../src/detectors/index.js";
import { JUDGEMENT_FAILED_RULE } from "../../src/policy/enforcement.js";
import { parsePolicy } from "../../src/policy/load-config.js";
import type { ContentDetectors } from "../../src/policy/policy.js";
import { StdioTap } from "../../src/stdio/stdio-tap.js";
import type { LogRecord, TestProxy } from "../helpers/proxy-harness.js";
import type { ScriptedUpstream } from "../helpers/scripted-mcp-upstream.js";
import type { WireClient } from "../policy/wire-client.js";
import { wireScenario } from "../policy/wire-scenario.js";
import { recordingPipeline } from "./pipeline-fixtures.js";

const MARKER = "explode-the-detector";

/** The shipped detectors, with `secrets` throwing on the marker (as a broken detector or pin store would). */
const THROWING: ContentDetectors = {
  ...detectors,
  secrets: {
    scan(value, basePath) {
      if (JSON.stringify(value)?.includes(MARKER)) throw new Error("detector failed on purpose");
      return detectors.secrets!.scan(value, basePath);
    },
  },
};

const POLICY = (mode: "enforce" | "monitor"): string => `mode: ${mode}\ndetectors: { secrets: deny }\n`;

const call = (id: number, text: string): Record<string, unknown> => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "echo", arguments: { text } } });

type Decision = { action: string; enforced: boolean; effect?: string; rules: { name: string; action: string; reason?: string }[] };

function expectFailedJudgement(rec: Record<string, unknown>, mode: "enforce" | "monitor"): void {
  const decision = rec.decision as Decision;
  expect(decision).toMatchObject({ action: mode === "enforce" ? "deny" : "flag", enforced: mode === "enforce" });
  expect(decision.rules).toEqual([{ name: JUDGEMENT_FAILED_RULE, action: mode === "enforce" ? "deny" : "flag", reason: expect.stringMatching(/could not judge this message: Error: detector failed on purpose/) }]);
}

for (const mode of ["enforce", "monitor"] as const) {
  describe(`HTTP, ${mode} mode: the policy throws`, () => {
    let up: ScriptedUpstream;
    let proxy: TestProxy;
    let client: WireClient;
    let url: string;
    const scenario = wireScenario(POLICY(mode), { detectors: THROWING });
    beforeAll(() => void ({ up, proxy, client, url } = scenario));

    it(mode === "enforce" ? "the request is refused with -32053 and never reaches the upstream" : "the request is forwarded and the error recorded", async () => {
      const before = up.requests.length;
      const res = await client.post(url, call(1, MARKER));
      const rec = await proxy.waitForRecord((r: LogRecord) => r.event === "rpc" && r.id === 1 && r.direction === "client_to_server");
      expect(rec).toMatchObject({ kind: "request", method: "tools/call", tool: "echo", level: "warn" });
      expectFailedJudgement(rec, mode);
      if (mode === "enforce") {
        expect(up.requests.length).toBe(before);
        expect(res.json).toMatchObject({ id: 1, error: { code: JUDGEMENT_FAILED_CODE, message: expect.stringMatching(/could not judge this message/) } });
      } else {
        expect(up.requests.length).toBe(before + 1);
        expect(res.json).toMatchObject({ id: 1, result: expect.anything() });
      }
    });

    it("a message the policy can judge still passes", async () => {
      const res = await client.post(url, { jsonrpc: "2.0", id: 2, method: "ping" });
      expect(res.json).toEqual({ jsonrpc: "2.0", id: 2, result: {} });
    });
  });

  describe(`stdio, ${mode} mode: the policy throws`, () => {
    it(mode === "enforce" ? "the line stays back and the client gets -32053" : "the line is forwarded and the error recorded", () => {
      const policy = createPolicy(parsePolicy(POLICY(mode)), { pins: null, detectors: THROWING });
      const { pipeline, records } = recordingPipeline(policy, { payloads: { payloads: "truncated", maxPayloadBytes: 1000 } });
      const toServer: string[] = [];
      const toClient: string[] = [];
      const errors: unknown[] = [];
      const tap = new StdioTap({
        pipeline,
        server: "stdio:t",
        session: "s",
        maxInspectBytes: 10_000,
        ...(mode === "enforce" ? { enforce: { removeDeniedTools: true } } : {}),
        toServer: (b) => toServer.push(b.toString()),
        toClient: (b) => toClient.push(b.toString()),
        onError: (err) => errors.push(err),
      });
      const bad = `${JSON.stringify(call(7, MARKER))}\n`;
      const good = `${JSON.stringify(call(8, "hello"))}\n`;
      tap.fromClient(Buffer.from(bad + good));
      expect(errors).toEqual([]);
      const rec = records.find((r) => r.id === 7)!;
      expect(rec).toMatchObject({ kind: "request", method: "tools/call", tool: "echo" });
      expectFailedJudgement(rec, mode);
      if (mode === "enforce") {
        expect(toServer.join("")).toBe(good);
        expect(JSON.parse(toClient.join(""))).toMatchObject({ id: 7, error: { code: JUDGEMENT_FAILED_CODE } });
      } else {
        expect(toServer.join("")).toBe(bad + good);
        expect(toClient).toEqual([]);
      }
    });
  });
}
