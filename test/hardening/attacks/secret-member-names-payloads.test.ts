/**
 * The secrets detector reports a secret used as a JSON member name at `<parent>/<redacted>` (and whatever lies
 * beneath it at `<parent>/<redacted>/…`), so that its path never shows it. The rpc record masks payloads at the
 * findings' pointers: those pointers name no member, so nothing was masked. A token sent as an argument's name
 * (or a key pasted under such a name) reached the `rpc` record, the UI feed and OTLP payload attributes in clear.
 */
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import type { TestProxy } from "../../helpers/proxy-harness.js";
import type { ScriptedMcp } from "../../policy/scripted-server.js";
import type { WireClient } from "../../policy/wire-client.js";
import { wireScenario } from "../../policy/wire-scenario.js";

/** Built at run time: no complete credential in the source. */
const TOKEN = ["ghp_", "k3Jx9QvT2mLw8RbN4cYh6ZpD1sFa7GeU5oVi"].join("");
const OTHER = ["ghp_", "Qw3Jx9QvT2mLw8RbN4cYh6ZpD1sFa7GeU5oVj"].join("");
const SERVER_TOKEN = ["glpat-", "Zk4Rt8Yp2Wq6Lm9Nb3Vc"].join("");
const AWS_KEY_ID = ["AKIA", "J5TR8PQ2WX7M4K9B"].join("");

describe("secrets as member names of payloads", () => {
  let proxy: TestProxy;
  let client: WireClient;
  let url: string;
  let mcp: ScriptedMcp;
  const scenario = wireScenario("mode: monitor\n");
  beforeAll(() => void ({ proxy, client, url, mcp } = scenario));

  it("a token as an argument's name, and a key beneath another, are masked in the request's record", async () => {
    mcp.setScript((m) => ({ kind: "json", value: { jsonrpc: "2.0", id: m.id, result: { content: [] } } }));
    const args = { [TOKEN]: "x", nested: { [OTHER]: { v: AWS_KEY_ID } }, plain: "kept" };
    const res = await client.post(url, { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", arguments: args } });
    expect(res.status).toBe(200);
    const rec = await proxy.waitForRecord((r) => r.event === "rpc" && r.id === 1 && r.kind === "request", { what: "request record" });
    const logged = (rec.params as { arguments: Record<string, unknown> }).arguments;
    expect(logged.plain).toBe("kept");
    expect(Object.keys(logged)).toContain("[redacted: github_token]");
    const log = readFileSync(proxy.logFile, "utf8");
    for (const secret of [TOKEN, OTHER, AWS_KEY_ID]) expect(log).not.toContain(secret.slice(4));
  });

  it("a token as a member name of a tool's result is masked in the response's record", async () => {
    mcp.setScript((m) => ({ kind: "json", value: { jsonrpc: "2.0", id: m.id, result: { content: [], structuredContent: { [SERVER_TOKEN]: "v" } } } }));
    await client.post(url, { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "echo", arguments: {} } });
    const rec = await proxy.waitForRecord((r) => r.event === "rpc" && r.id === 2 && r.kind === "response", { what: "response record" });
    expect(Object.keys((rec.result as { structuredContent: object }).structuredContent)).toEqual(["[redacted: gitlab_token]"]);
    expect(readFileSync(proxy.logFile, "utf8")).not.toContain(SERVER_TOKEN.slice(6));
  });
});
