/**
 * A request body labelled `text/event-stream`. The proxy reads every other non-JSON request body as JSON too
 * ("a lenient server may accept JSON-RPC under any content type"), but this one it read as an event stream
 * only, and a JSON body has no `data:` line: nothing was judged, the exchange was not yet known to be MCP,
 * and enforce mode forwarded the denied call, with no record of it.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { ScriptedUpstream } from "../../helpers/scripted-mcp-upstream.js";
import type { TestProxy } from "../../helpers/proxy-harness.js";
import type { WireClient } from "../../policy/wire-client.js";
import { wireScenario } from "../../policy/wire-scenario.js";

const denied = (id: number): string => `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"delete_everything","arguments":{}}}`;

describe("a JSON-RPC request labelled text/event-stream (enforce mode)", () => {
  let up: ScriptedUpstream;
  let client: WireClient;
  let proxy: TestProxy;
  let url: string;
  const scenario = wireScenario(`mode: enforce\nrules:\n  - { name: no-delete, action: deny, match: { tool: delete_everything } }\n`);
  beforeAll(() => void ({ up, client, url, proxy } = scenario));

  let id = 1;
  for (const type of ["text/event-stream", "text/event-stream; x=application/json"]) {
    it(`a denied call (${type}): judged and refused, never forwarded`, async () => {
      const n = id++;
      const before = up.requests.length;
      const res = await client.post(url, denied(n), { "content-type": type });
      expect(up.requests.length, `forwarded (status ${res.status}: ${res.text})`).toBe(before);
      const records = await proxy.records();
      expect(records.some((r) => r.direction === "client_to_server" && r.id === n && (r.decision as { action?: string } | undefined)?.action === "deny")).toBe(true);
    });
  }
});
