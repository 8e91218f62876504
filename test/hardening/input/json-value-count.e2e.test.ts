/**
 * A request body just over the JSON value bound (MAX_JSON_VALUES, counted before parsing) through the
 * differential rig: the proxy cannot read it, a lenient server can (JSON.parse has no such bound). Enforce
 * mode denies it and nothing reaches the upstream; monitor mode forwards it byte for byte, with a record
 * that says it was not read.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_JSON_VALUES } from "../../../src/body/limits.js";
import { parseAsUpstream } from "../../helpers/differential-check.js";
import { DENIED_TOOL, differentialFindings, sendRaw, startRig, type PolicyMode, type Rig, type Route } from "../../helpers/differential-rig.js";
import { parseRawResponse } from "../../helpers/proxy-harness.js";

const MCP = "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Protocol-Version: 2025-06-18\r\n";

/** A call of the denied tool whose arguments take it one value past the bound (a member is a colon and a comma). */
function overBound(id: number): string {
  const members = Array.from({ length: MAX_JSON_VALUES / 2 + 1 }, (_, i) => `"k${i}":1`).join(",");
  return `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${DENIED_TOOL}","arguments":{${members}}}}`;
}

describe(`a request body just over ${MAX_JSON_VALUES} JSON values`, () => {
  let rig: Rig;
  let n = 0;
  beforeAll(async () => {
    rig = await startRig();
  });
  afterAll(async () => {
    await rig?.close();
  });

  for (const mode of ["enforce", "monitor"] as PolicyMode[]) {
    for (const route of ["tunnel", "absolute"] as Route[]) {
      it(`${mode} mode, ${route}: ${mode === "enforce" ? "denied, never reaching the upstream" : "forwarded byte-identical, recorded as unread"}`, async () => {
        const side = rig.sides[mode];
        const up = side.upstream[route];
        const path = `/mcp?case=${String(++n).padStart(4, "0")}`;
        const body = overBound(n);
        const answer = parseRawResponse(
          await sendRaw(side, route, [`POST ${path} HTTP/1.1\r\nHost: ${up.authority}\r\n${MCP}Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`], { timeoutMs: 10_000 }),
        );
        // Monitor mode leaves one finding for good (below): wait for the exchange's records, not out the poll.
        for (let i = 0; i < 100 && !(await side.proxy.records()).some((r) => r.event === "http" && r.path === path); i++) await new Promise((r) => setTimeout(r, 50));
        const findings = await differentialFindings(side, route, path, mode === "enforce" ? 5_000 : 0);
        const reached = (await parseAsUpstream(up.connections)).filter((r) => r.url === path);
        const records = (await side.proxy.records()).filter((r) => r.path === path);
        const rpc = records.filter((r) => r.event === "rpc" && r.direction === "client_to_server");
        // One record of the body as sent, unread: its bytes are all of the body's.
        expect(rpc).toHaveLength(1);
        expect(rpc[0]).toMatchObject({ kind: "invalid", bytes: body.length, method: null });
        expect(String(rpc[0]!.reason)).toMatch(/json_too_many_values/);
        if (mode === "enforce") {
          expect(findings).toEqual([]);
          expect(reached).toEqual([]);
          expect(rpc[0]!.decision).toMatchObject({ action: "deny", enforced: true });
          // The client is told why, as a JSON-RPC error the proxy wrote (one response, nothing of the upstream's).
          const error = JSON.parse(answer.body.toString("utf8")) as { error?: { code?: number; message?: string } };
          expect(error.error?.code).toBe(-32052);
          expect(error.error?.message).toMatch(/more than 200000 values/);
        } else {
          // Forwarded byte for byte; the upstream's lenient reading (JSON.parse has no value bound) is the one
          // message the records hold only as this unread body.
          expect(findings.map((f) => f.kind)).toEqual(["unrecorded_message"]);
          expect(reached).toHaveLength(1);
          expect(reached[0]!.body.toString("latin1")).toBe(body);
          expect(answer.status).toBe(200);
          expect(answer.body.toString("utf8")).toBe(JSON.stringify({ jsonrpc: "2.0", id: n, result: { content: [{ type: "text", text: `ran ${DENIED_TOOL}` }] } }));
        }
      }, 30_000);
    }
  }
});
