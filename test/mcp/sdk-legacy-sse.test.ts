/**
 * The official SDK client talks to server-everything over the legacy HTTP+SSE transport (2024-11-05),
 * through the proxy, over TLS: requests are POSTed to the announced endpoint and answered on the GET stream.
 */
import { describe, expect, it } from "vitest";
import { connectSse } from "../helpers/mcp-client.js";
import { waitUntil } from "../helpers/wait-until.js";
import { checkLog, rpc, runScenario, serverEverythingThroughProxy } from "./sdk-scenario.js";

describe("SDK client ↔ server-everything over legacy HTTP+SSE, through the proxy", () => {
  const env = serverEverythingThroughProxy();

  it("correlates POSTed requests with responses on the GET stream, and ends the session when the stream closes", async () => {
    const { upstream, proxy } = env;
    const connected = await connectSse(upstream.sseUrl, { proxyUrl: proxy.url, caPem: proxy.caPem, clientName: "wiretap-sdk-legacy" });
    let scenario;
    try {
      scenario = await runScenario(connected.client, proxy);
    } finally {
      await connected.close();
    }
    await waitUntil(() => upstream.openSessions === 0, { what: "the upstream session to end" });
    const end = await proxy.waitForRecord((r) => r.event === "session" && r.phase === "end", { what: "session end" });
    expect(end).toMatchObject({ reason: "stream closed", transport: "http+sse" });

    const all = await proxy.records();
    // The session is the endpoint the server announced (TypeScript SDK style: /message?sessionId=<uuid>).
    const session = end.session as string;
    expect(session).toMatch(/^\/message\?sessionId=[0-9a-f-]{36}$/);
    const posted = connected.fetched.filter((f) => f.startsWith("POST "));
    expect(posted.length).toBeGreaterThan(5);
    for (const f of posted) expect(f.endsWith(session)).toBe(true);

    checkLog(all, scenario, { transport: "http+sse", session, clientName: "wiretap-sdk-legacy" });
    // Requests travel on the POSTs, everything from the server on the one GET stream.
    const getFlow = all.find((r) => r.event === "http" && r.method === "GET" && r.path === "/sse")!.flow;
    for (const r of all.filter(rpc)) {
      if (r.direction === "server_to_client") expect(r.flow).toBe(getFlow);
      else expect(r.flow).not.toBe(getFlow);
    }
    // A 2024-11-05 session has no version header: the version comes from the handshake.
    const start = all.find((r) => r.event === "session" && r.phase === "start")!;
    expect(start.session).toBe(session);
  });
});
