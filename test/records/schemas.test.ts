/**
 * The record schemas are the contract docs/log-format.md describes: every record an SDK session through
 * the proxy produces parses with its schema, and the fields each schema names are the fields the docs'
 * tables name (neither can change without the other).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { COMMON_FIELDS, HttpRecordSchema, RECORD_SCHEMAS, RpcRecordSchema, SessionRecordSchema, StartRecordSchema, StopRecordSchema, StdioStartRecordSchema } from "../../src/records/schemas.js";
import { connectSse, connectStreamable } from "../helpers/mcp-client.js";
import { startMcpUpstream } from "../helpers/mcp-upstream.js";
import { REPO_ROOT, startTestProxy, type LogRecord } from "../helpers/proxy-harness.js";
import { runScenario } from "../mcp/sdk-scenario.js";
import { createPolicy } from "../../src/policy/create-policy.js";
import { parsePolicy } from "../../src/policy/load-config.js";
import { AWS_KEY_ID } from "../policy/scripted-server.js";
import { recordingPipeline } from "../pipeline/pipeline-fixtures.js";

const DOC = readFileSync(path.join(REPO_ROOT, "docs", "log-format.md"), "utf8");

/** Field names of the `| Field | …` tables under a heading, up to the next heading of that level or above. */
function documentedFields(heading: string): Set<string> {
  const start = DOC.indexOf(`\n${heading}\n`);
  expect(start, heading).toBeGreaterThan(-1);
  const level = heading.split(" ")[0]!;
  const rest = DOC.slice(start + heading.length + 2);
  const end = rest.search(new RegExp(`\\n#{1,${level.length}} `));
  const section = end === -1 ? rest : rest.slice(0, end);
  const fields = new Set<string>();
  let inFieldTable = false;
  for (const line of section.split("\n")) {
    if (!line.startsWith("|")) {
      inFieldTable = false;
      continue;
    }
    if (/^\|\s*Field\s*\|/.test(line)) {
      inFieldTable = true;
      continue;
    }
    if (!inFieldTable) continue;
    const first = line.split("|")[1] ?? "";
    for (const m of first.matchAll(/`([A-Za-z_]+)`/g)) fields.add(m[1]!);
  }
  return fields;
}

const schemaFields = (shape: Record<string, unknown>): Set<string> => new Set(Object.keys(shape).filter((k) => k !== "event" && !COMMON_FIELDS.includes(k)));
const sorted = (s: Set<string>): string[] => [...s].sort();

describe("docs/log-format.md and the record schemas name the same fields", () => {
  it("start, http, rpc, session", () => {
    expect(sorted(schemaFields(StartRecordSchema.shape))).toEqual(sorted(documentedFields("### start")));
    expect(sorted(schemaFields(HttpRecordSchema.shape))).toEqual(sorted(documentedFields("### http")));
    expect(sorted(schemaFields(RpcRecordSchema.shape))).toEqual(sorted(documentedFields("### rpc")));
    expect(sorted(schemaFields(SessionRecordSchema.shape))).toEqual(sorted(documentedFields("### session")));
  });

  it("stop, and the start and stop of a stdio launch", () => {
    const stdio = documentedFields("## stdio launches");
    const stop = new Set([...documentedFields("### stop"), ...["server", "session", "exitCode"].filter((f) => stdio.has(f))]);
    expect(sorted(schemaFields(StopRecordSchema.shape))).toEqual(sorted(stop));
    for (const f of schemaFields(StdioStartRecordSchema.shape)) if (f !== "version") expect(stdio.has(f), f).toBe(true);
  });

  it("every record type with a schema is a documented record type", () => {
    for (const type of Object.keys(RECORD_SCHEMAS)) expect(DOC).toContain(`| [\`${type}\`](#${type}) |`);
  });
});

describe("real records parse with their schemas", () => {
  it("rpc records with decisions that deny, flag and carry findings, from the production pipeline", () => {
    const policy = createPolicy(parsePolicy("mode: enforce\ndetectors: { secrets: deny, pii: flag }\n"), { pins: null });
    const { pipeline, records } = recordingPipeline(policy, { payloads: { payloads: "truncated", maxPayloadBytes: 1000 } });
    const ctx = { flow: "f-1", transport: "streamable-http" as const, server: "[::1]:8443", path: "/mcp?key=k", session: "s-1", protocolVersion: "2025-11-25", direction: "client_to_server" as const, scope: "s-1" };
    pipeline.message(ctx, { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "echo", arguments: { key: AWS_KEY_ID, mail: "ada@example.com" } } }, 120);
    pipeline.invalid(ctx, "invalid_json: invalid JSON", 0);
    pipeline.tracker.close();
    const rpcs = records.filter((r) => r.event === "rpc");
    // Enforce mode refuses what it cannot read as JSON-RPC (the invalid message) as well.
    expect(rpcs.map((r) => (r.decision as { action: string }).action)).toEqual(["deny", "deny", "allow"]);
    expect(JSON.stringify(rpcs[0])).toContain('"findings"');
    for (const record of records) {
      const schema = RECORD_SCHEMAS[record.event as keyof typeof RECORD_SCHEMAS];
      const parsed = schema.safeParse({ level: "info", time: "2026-11-23T00:00:00.000Z", ...record });
      expect(parsed.success ? null : { record, issues: parsed.error.issues }).toBeNull();
    }
  });

  it("an SDK session over Streamable HTTP and one over HTTP+SSE, through the proxy, start to stop", async () => {
    const upstream = await startMcpUpstream();
    const proxy = await startTestProxy({ payloads: "full" });
    let all: LogRecord[] = [];
    try {
      for (const connect of [connectStreamable, connectSse]) {
        const connected = await connect(connect === connectSse ? upstream.sseUrl : upstream.streamableUrl, { proxyUrl: proxy.url, caPem: proxy.caPem, clientName: "wiretap-schemas" });
        try {
          await runScenario(connected.client, proxy);
        } finally {
          await connected.close();
        }
      }
    } finally {
      all = await proxy.stop("test");
      await upstream.close();
    }
    const seen = new Set<string>();
    for (const record of all) {
      const schema = RECORD_SCHEMAS[record.event as keyof typeof RECORD_SCHEMAS];
      if (!schema) continue;
      seen.add(record.event!);
      const parsed = schema.safeParse(record);
      expect(parsed.success ? null : { record, issues: parsed.error.issues }).toBeNull();
    }
    expect(sorted(seen)).toEqual(["http", "rpc", "session", "start", "stop"]);
    expect(all.filter((r) => r.event === "rpc").length).toBeGreaterThan(20);
  });
});
