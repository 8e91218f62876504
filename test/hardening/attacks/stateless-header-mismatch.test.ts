/**
 * The 2026-07-28 revision repeats the method and its target in `Mcp-Method` / `Mcp-Name` so that gateways
 * can route without reading bodies. A receiver that dispatches on the header reads another call than the
 * body: `Mcp-Name: delete_everything` over a body calling `echo`. Before, enforce mode judged the body only
 * and forwarded it (a `headerMismatch` on the record); now the header's reading is judged too and the
 * message, readable two ways, is refused.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { LogRecord, TestProxy } from "../../helpers/proxy-harness.js";
import type { ScriptedUpstream } from "../../helpers/scripted-mcp-upstream.js";
import type { WireClient } from "../../policy/wire-client.js";
import { wireScenario } from "../../policy/wire-scenario.js";

const RULES = `rules:
  - { name: no-delete, action: deny, match: { tool: delete_everything } }
`;
const STATELESS = { "mcp-protocol-version": "2026-07-28" };
type Decision = { action: string; enforced: boolean; rules: { name: string; action: string }[] };

const call = (id: number, name: string): Record<string, unknown> => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: {}, _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28" } },
});

function suite(mode: "enforce" | "monitor"): void {
  describe(`${mode} mode`, () => {
    let up: ScriptedUpstream;
    let proxy: TestProxy;
    let client: WireClient;
    let url: string;
    let nextId = mode === "enforce" ? 10 : 20;
    const scenario = wireScenario(`mode: ${mode}\n${RULES}`);
    beforeAll(() => void ({ up, proxy, client, url } = scenario));
    const record = (id: number): Promise<LogRecord> => proxy.waitForRecord((r) => r.event === "rpc" && r.id === id && r.direction === "client_to_server", { what: `request ${id}` });

    it(`Mcp-Name names a denied tool, the body an allowed one: ${mode === "enforce" ? "refused" : "forwarded, recorded with the mismatch"}`, async () => {
      const id = nextId++;
      const before = up.requests.length;
      const res = await client.post(url, call(id, "echo"), { ...STATELESS, "mcp-method": "tools/call", "mcp-name": "delete_everything" });
      const rec = await record(id);
      expect(rec.headerMismatch).toEqual([{ header: "Mcp-Name", headerValue: "delete_everything", bodyValue: "echo" }]);
      if (mode === "enforce") {
        expect(up.requests.length).toBe(before);
        expect(res.json).toMatchObject({ id, error: { code: -32052 } });
        expect((rec.decision as Decision).rules.map((r) => r.name)).toEqual(expect.arrayContaining(["no-delete", "unreadable"]));
      } else {
        expect(up.requests.length).toBe(before + 1);
        expect(rec.decision).toMatchObject({ action: "allow" });
      }
    });

    it("headers that agree with the body pass as before", async () => {
      const id = nextId++;
      const before = up.requests.length;
      await client.post(url, call(id, "echo"), { ...STATELESS, "mcp-method": "tools/call", "mcp-name": "echo" });
      const rec = await record(id);
      expect(rec.headerMismatch).toBeUndefined();
      expect(up.requests.length).toBe(before + 1);
    });
  });
}

describe("stateless routing headers that disagree with the body", () => {
  suite("enforce");
  suite("monitor");
});
