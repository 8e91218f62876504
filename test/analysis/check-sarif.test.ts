/**
 * `check --format sarif`: SARIF 2.1.0 for code-scanning views, validated against the OASIS SARIF 2.1.0 JSON
 * schema (test/fixtures/sarif/sarif-schema-2.1.0.json, from oasis-tcs/sarif-spec, sarif-2.1/schema/): each
 * finding a result with its rule, level, and the log file and line of the record it is about.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { Ajv } from "ajv";
import formats from "ajv-formats";
import { afterAll, describe, expect, it } from "vitest";
import { CONDITIONS } from "../../src/analysis/conditions.js";
import { checkCommand } from "../../src/cli/check-command.js";
import { REPO_ROOT, type LogRecord } from "../helpers/proxy-harness.js";
import { CASES, cleanLog, removeLogs, rpcRecord, writeLog } from "./hand-made.js";
import { capturedIo } from "../helpers/captured-io.js";

afterAll(() => removeLogs());

/** The schema is draft-04 (`id`, `$schema` of draft-04); Ajv reads it as draft-07, which it is compatible with here. */
function sarifValidator() {
  const schema = JSON.parse(readFileSync(path.join(REPO_ROOT, "test", "fixtures", "sarif", "sarif-schema-2.1.0.json"), "utf8")) as Record<string, unknown>;
  const { $schema: _draft, id, ...rest } = schema;
  const ajv = new Ajv({ strict: false, allErrors: true });
  // ajv-formats is CommonJS: its plugin is the module itself (default) under Node's ESM.
  const addFormats = ((formats as unknown as { default?: unknown }).default ?? formats) as unknown as (a: Ajv) => Ajv;
  addFormats(ajv);
  return ajv.compile({ ...rest, $id: String(id) });
}

const io = capturedIo;

type Sarif = { version: string; runs: { tool: { driver: { name: string; rules: { id: string }[] } }; results: { ruleId: string; ruleIndex: number; level: string; message: { text: string }; locations?: { physicalLocation: { artifactLocation: { uri: string }; region: { startLine: number } } }[] }[] }[] };

describe("check --format sarif", () => {
  it("every finding is a result with its rule, level, and the log file and line; the report is valid SARIF 2.1.0", async () => {
    const records: LogRecord[] = [cleanLog()[0]!, ...Object.values(CASES).flatMap((make) => make().slice(1, -1)), rpcRecord({ id: 5, tool: 'q"<&>\u0001' })];
    const file = await writeLog(records);
    const lines = readFileSync(file, "utf8").split("\n");
    const { out, io: x } = io();
    expect(await checkCommand([file], { failOn: [...CONDITIONS], format: "sarif" }, x)).toBe(1);
    const report = JSON.parse(out.stdout) as Sarif;
    const validate = sarifValidator();
    expect(validate(report), JSON.stringify(validate.errors, null, 1)).toBe(true);
    expect(report.version).toBe("2.1.0");
    const run = report.runs[0]!;
    expect(run.tool.driver.name).toBe("mcp-wiretap");
    expect(run.tool.driver.rules.map((r) => r.id)).toEqual([...CONDITIONS]);
    const text = io();
    await checkCommand([file], { failOn: [...CONDITIONS] }, text.io);
    const findings = text.out.stdout.trimEnd().split("\n").slice(0, -1);
    expect(run.results).toHaveLength(findings.length);
    for (const result of run.results) {
      expect(run.tool.driver.rules[result.ruleIndex]!.id).toBe(result.ruleId);
      expect(["error", "warning"]).toContain(result.level);
      const where = result.locations?.[0]?.physicalLocation;
      if (result.ruleId === "incomplete" && !where) continue; // about the log as a whole (no stop record)
      expect(path.resolve(REPO_ROOT, decodeURIComponent(where!.artifactLocation.uri.replace(/^file:\/\//, "")))).toBe(file);
      const line = lines[where!.region.startLine - 1]!;
      // The line named is the record the finding is about.
      const record = JSON.parse(line) as LogRecord;
      if (typeof record.method === "string" && result.ruleId !== "incomplete") expect(result.message.text).toContain(record.method);
    }
    const deny = run.results.find((r) => r.ruleId === "deny")!;
    expect(deny.level).toBe("error");
    expect(run.results.find((r) => r.ruleId === "drift")!.level).toBe("warning");
  });

  it("a clean log gives a valid report with no result", async () => {
    const { out, io: x } = io();
    expect(await checkCommand([await writeLog(cleanLog())], { failOn: [...CONDITIONS], format: "sarif" }, x)).toBe(0);
    const report = JSON.parse(out.stdout) as Sarif;
    expect(sarifValidator()(report)).toBe(true);
    expect(report.runs[0]!.results).toEqual([]);
  });
});
