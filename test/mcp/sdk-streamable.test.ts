/**
 * The official SDK client talks to server-everything over Streamable HTTP, through the proxy, over TLS;
 * everything a user would check is checked on the log alone.
 */
import { describe, expect, it } from "vitest";
import { connectStreamable } from "../helpers/mcp-client.js";
import { waitUntil } from "../helpers/wait-until.js";
import { checkLog, rpc, runScenario, serverEverythingThroughProxy } from "./sdk-scenario.js";

describe("SDK client ↔ server-everything over Streamable HTTP, through the proxy", () => {
  const env = serverEverythingThroughProxy();

  it("logs every request with its response, tool-call hashes, live progress and the session's start and end", async () => {
    const { upstream, proxy } = env;
    const connected = await connectStreamable(upstream.streamableUrl, {
      proxyUrl: proxy.url,
      caPem: proxy.caPem,
      clientName: "wiretap-sdk-streamable",
    });
    let sessionId: string | undefined;
    let scenario;
    try {
      sessionId = connected.transport.sessionId;
      expect(sessionId).toBeTruthy();
      scenario = await runScenario(connected.client, proxy);
    } finally {
      await connected.close();
    }
    expect(upstream.counters.deletes).toBe(1);
    await waitUntil(() => upstream.openSessions === 0, { what: "the upstream session to end" });
    const end = await proxy.waitForRecord((r) => r.event === "session" && r.phase === "end", { what: "session end" });
    expect(end).toMatchObject({ session: sessionId, reason: "deleted", transport: "streamable-http" });
    expect(end.durationMs as number).toBeGreaterThanOrEqual(1000);
    expect(end.messages as number).toBeGreaterThan(10);

    const all = await proxy.records();
    checkLog(all, scenario, { transport: "streamable-http", session: sessionId!, clientName: "wiretap-sdk-streamable" });
    // 2025-06-18 onward: the version the server chose is on every record of the session.
    const start = all.find((r) => r.event === "session" && r.phase === "start")!;
    for (const r of all.filter(rpc)) expect(r.protocolVersion).toBe(start.protocolVersion);
    // The DELETE is an http record, not an rpc one.
    expect(all.some((r) => r.event === "http" && r.method === "DELETE" && r.status === 200)).toBe(true);
  });
});
