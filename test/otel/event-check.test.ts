/**
 * The exporter parses only the lines that make spans (rpc and policy records), telling them apart by the
 * first `"event":"` of the line. That must agree with the parsed record's own `event` on every line the proxy
 * writes, and on lines whose payloads carry an `event` member or string of their own.
 */
import { readFile } from "node:fs/promises";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { makesSpans } from "../../src/otel/otlp-exporter.js";
import { connectStreamable } from "../helpers/mcp-client.js";
import { startMcpUpstream } from "../helpers/mcp-upstream.js";
import { startTestProxy } from "../helpers/proxy-harness.js";
import { runScenario } from "../mcp/sdk-scenario.js";

const spanEvents = new Set(["rpc", "policy"]);
const byParsing = (line: string): boolean => spanEvents.has((JSON.parse(line) as { event?: unknown }).event as string);

describe("which record lines the exporter parses", () => {
  it("agrees with the parsed event on every line of a real SDK session (payloads in full)", async () => {
    const upstream = await startMcpUpstream();
    const proxy = await startTestProxy({ payloads: "full" });
    let text = "";
    try {
      const connected = await connectStreamable(upstream.streamableUrl, { proxyUrl: proxy.url, caPem: proxy.caPem, clientName: "wiretap-event-check" });
      try {
        await runScenario(connected.client, proxy);
      } finally {
        await connected.close();
      }
      text = await readFile(proxy.logFile, "utf8");
    } finally {
      await proxy.stop("test");
      await upstream.close();
    }
    const lines = text.split("\n").filter((l) => l.startsWith("{"));
    expect(lines.length).toBeGreaterThan(20);
    const picked = lines.filter(makesSpans);
    expect(picked.length).toBeGreaterThan(10);
    for (const line of lines) expect(makesSpans(line), line.slice(0, 200)).toBe(byParsing(line));
  });

  it("is not fooled by an event member or string inside a record's payload", () => {
    const payload = fc.oneof(fc.jsonValue(), fc.constantFrom({ event: "rpc" }, { event: "policy" }, '"event":"rpc"', '{"event":"policy"}', "\\\"event\\\":\\\"rpc"));
    fc.assert(
      fc.property(fc.constantFrom("rpc", "policy", "http", "session", "start", "stop", "tunnel", "rpcx", "policy2"), fc.array(fc.tuple(fc.string().filter((k) => !/^(0|[1-9]\d*)$/.test(k)), payload), { maxLength: 4 }), (event, members) => {
        // Members follow `event`, as in every record (array-index-like names, which JavaScript would put first,
        // are never record fields).
        const record: Record<string, unknown> = { level: "info", time: "2026-11-24T00:00:00.000Z", event };
        for (const [k, v] of members) if (!(k in record)) record[k] = v;
        const line = JSON.stringify(record);
        expect(makesSpans(line)).toBe(spanEvents.has(event));
      }),
      { numRuns: 500 },
    );
  });
});
