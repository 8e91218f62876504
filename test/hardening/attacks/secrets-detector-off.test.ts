/**
 * Secrets in rpc payloads were masked only where the policy's secrets detector had found them: with
 * `detectors: { secrets: off }` (turned off for its flags, or its denials) nothing was, and a key in a tool's
 * result reached the log in clear, although "Secrets by shape" are masked "in every payload mode" and the
 * session and invalid records are scanned "whatever the policy's detector settings".
 */
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import type { TestProxy } from "../../helpers/proxy-harness.js";
import { AWS_KEY_ID } from "../../policy/scripted-server.js";
import type { WireClient } from "../../policy/wire-client.js";
import { wireScenario } from "../../policy/wire-scenario.js";

describe("the secrets detector turned off", () => {
  let proxy: TestProxy;
  let client: WireClient;
  let url: string;
  const scenario = wireScenario("mode: monitor\ndetectors: { secrets: off }\n");
  beforeAll(() => void ({ proxy, client, url } = scenario));

  it("a key in a tool's result is still masked in the record; the decision names no secret", async () => {
    const res = await client.post(url, { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", arguments: {} } });
    expect(res.text).toContain(AWS_KEY_ID); // monitor mode: the client gets the result as sent
    const rec = await proxy.waitForRecord((r) => r.event === "rpc" && r.id === 1 && r.kind === "response", { what: "response record" });
    expect(JSON.stringify(rec.result)).toContain("[redacted: aws_access_key_id]");
    expect(JSON.stringify(rec.decision)).not.toContain("detector:secrets");
    expect(readFileSync(proxy.logFile, "utf8")).not.toContain(AWS_KEY_ID.slice(4));
  });
});
