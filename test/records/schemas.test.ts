/**
 * The record schemas are the contract docs/log-format.md describes: every record type the code writes has
 * one, the fields each names are the fields the docs' tables name (neither can change without the other),
 * and real records parse with them (here an SDK session through the proxy; the tests that produce the
 * other types check theirs with expectRecordsMatchSchemas).
 */
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  AddonErrorRecordSchema,
  COMMON_FIELDS,
  RECORD_SCHEMAS,
  StartRecordSchema,
  StdioAddonErrorRecordSchema,
  StdioStartRecordSchema,
  type RecordType,
} from "../../src/records/schemas.js";
import { connectSse, connectStreamable } from "../helpers/mcp-client.js";
import { startMcpUpstream } from "../helpers/mcp-upstream.js";
import { REPO_ROOT, startTestProxy, type LogRecord } from "../helpers/proxy-harness.js";
import { runScenario } from "../mcp/sdk-scenario.js";
import { createPolicy } from "../../src/policy/create-policy.js";
import { parsePolicy } from "../../src/policy/load-config.js";
import { AWS_KEY_ID } from "../policy/scripted-server.js";
import { recordingPipeline } from "../pipeline/pipeline-fixtures.js";
import { documentedFields, documentedLevels, documentedTables } from "./docs-tables.js";
import { expectRecordsMatchSchemas } from "./expect-records.js";

type ObjectSchema = z.ZodObject<z.ZodRawShape>;
const TYPES = Object.keys(RECORD_SCHEMAS) as RecordType[];

/** The shapes a record type has: one object, or the options of a union. */
function variants(type: RecordType): ObjectSchema[] {
  const schema = RECORD_SCHEMAS[type] as unknown as ObjectSchema | { options: ObjectSchema[] };
  return "options" in schema ? schema.options : [schema];
}

const fieldsOf = (shape: Record<string, unknown>): Set<string> => new Set(Object.keys(shape).filter((k) => k !== "event" && !COMMON_FIELDS.includes(k)));
const sorted = (s: Iterable<string>): string[] => [...s].sort();

describe("docs/log-format.md and the record schemas name the same fields", () => {
  it.each(TYPES)("%s: the fields of its schema are the fields of its section's tables", (type) => {
    const documented = documentedFields(`### ${type}`);
    expect(documented, `a "### ${type}" section in docs/log-format.md`).toBeDefined();
    expect(sorted(documented!), `a | Field | table under "### ${type}"`).not.toEqual([]);
    const fields = new Set(variants(type).flatMap((v) => [...fieldsOf(v.shape)]));
    expect(sorted(fields)).toEqual(sorted(documented!));
  });

  it("start and addon_error: the proxy's shape and the stdio launch's each have their own table", () => {
    for (const [type, shapes] of [
      ["start", [StartRecordSchema, StdioStartRecordSchema]],
      ["addon_error", [AddonErrorRecordSchema, StdioAddonErrorRecordSchema]],
    ] as const) {
      const tables = documentedTables(`### ${type}`)!;
      expect(tables.map(sorted), type).toEqual(shapes.map((s) => sorted(fieldsOf(s.shape))));
    }
  });

  it("every record type is in the table of record types, at the levels its schema allows", () => {
    const levels = documentedLevels();
    expect(sorted(levels.keys())).toEqual(sorted(TYPES));
    for (const type of TYPES) {
      const allowed = new Set(variants(type).flatMap((v) => (v.shape.level as z.ZodEnum).options as string[]));
      expect(sorted(allowed), type).toEqual(sorted(levels.get(type)!));
    }
  });
});

describe("every record type the code writes has a schema", () => {
  /** `event: "…"` literals in the source, wherever a record (or its type) is built. */
  function emittedEvents(): Set<string> {
    const events = new Set<string>();
    const src = path.join(REPO_ROOT, "src");
    for (const file of readdirSync(src, { recursive: true, encoding: "utf8" })) {
      if (!file.endsWith(".ts")) continue;
      for (const m of readFileSync(path.join(src, file), "utf8").matchAll(/\bevent:\s*["'`]([a-z_]+)["'`]/g)) events.add(m[1]!);
    }
    return events;
  }

  it("the event values in src/ are the keys of RECORD_SCHEMAS", () => {
    const emitted = emittedEvents();
    expect(emitted.size).toBeGreaterThan(10);
    expect(sorted(emitted)).toEqual(sorted(TYPES));
  });

  it("the schemas are strict, each under its own event: a field no table names fails", () => {
    for (const type of TYPES) {
      for (const v of variants(type)) {
        expect(v._zod.def.catchall?._zod.def.type, `${type}: z.strictObject`).toBe("never");
        expect((v.shape.event as z.ZodLiteral).value, `${type}: its event`).toBe(type);
      }
    }
    const stop = { level: "info", time: "2026-11-23T00:00:00.000Z", event: "stop", reason: "test" };
    expect(RECORD_SCHEMAS.stop.safeParse(stop).success).toBe(true);
    expect(RECORD_SCHEMAS.stop.safeParse({ ...stop, surplus: true }).success).toBe(false);
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
    expectRecordsMatchSchemas(records.map((r) => ({ level: "info", time: "2026-11-23T00:00:00.000Z", ...r })), "rpc");
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
    expectRecordsMatchSchemas(all, "http", "rpc", "session", "start", "stop");
    expect(sorted(new Set(all.map((r) => r.event!)))).toEqual(["http", "rpc", "session", "start", "stop"]);
    expect(all.filter((r) => r.event === "rpc").length).toBeGreaterThan(20);
  });
});
