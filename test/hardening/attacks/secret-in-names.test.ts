/**
 * A peer chooses names as well as values: a token sent as a request header's name (or split between a
 * header's name and its value) was written to the `http` record in clear, since only strings were scanned.
 */
import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import type { TestProxy } from "../../helpers/proxy-harness.js";
import type { WireClient } from "../../policy/wire-client.js";
import { wireScenario } from "../../policy/wire-scenario.js";

/** Built at run time: no complete credential in the source. */
const TOKEN = ["ghp_", "k3Jx9QvT2mLw8RbN4cYh6ZpD1sFa7GeU5oVi"].join("");

describe("secrets in names", () => {
  let proxy: TestProxy;
  let client: WireClient;
  let url: string;
  const scenario = wireScenario("mode: monitor\n");
  beforeAll(() => void ({ proxy, client, url } = scenario));

  it("a token as a header name is masked in the http record; the request is forwarded", async () => {
    const res = await client.post(url, { jsonrpc: "2.0", id: 1, method: "tools/list" }, { [`x-${TOKEN.toLowerCase()}`]: "1", [`x-${TOKEN}-b`]: "2", "x-plain": "kept" });
    expect(res.status).toBe(200);
    const rec = await proxy.waitForRecord((r) => r.event === "http" && r.method === "POST", { what: "http record" });
    const names = Object.keys(rec.requestHeaders as Record<string, unknown>);
    expect(names).toContain("x-plain");
    expect(names.filter((n) => n.startsWith("[redacted: github_token]"))).toHaveLength(2);
    const log = readFileSync(proxy.logFile, "utf8").toLowerCase();
    expect(log).not.toContain(TOKEN.slice(4).toLowerCase());
  });
});
