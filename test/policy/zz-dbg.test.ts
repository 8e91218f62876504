import { it } from "vitest";
import { startScriptedUpstream } from "../helpers/scripted-mcp-upstream.js";
import { startTestProxy } from "../helpers/proxy-harness.js";
import { tempDir, writePolicyFile } from "../policy/policy-fixtures.js";
import { scriptMcp } from "../policy/scripted-server.js";
import { wireClient } from "../policy/wire-client.js";
it("dbg", async () => {
  const tmp = tempDir();
  const up = await startScriptedUpstream();
  scriptMcp(up);
  const proxy = await startTestProxy({ config: writePolicyFile(tmp.dir, "mode: enforce\ndetectors: { secrets: deny }\n") });
  const c = wireClient(proxy);
  const r = await c.post(`${up.url}/mcp`, { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "x", arguments: {} } });
  console.log(r.status, r.text);
  await new Promise((r) => setTimeout(r, 300));
  console.log(JSON.stringify(await proxy.records(), null, 1));
  await c.close(); await proxy.stop(); await up.close(); tmp.cleanup();
});
