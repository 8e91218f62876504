/**
 * `check --format sarif`: SARIF 2.1.0 (OASIS), so findings land in code-scanning views. One run; one rule
 * per checked condition; one result per finding, pointing at the log file and line of the record it is about.
 */
import path from "node:path";
import { pathToFileURL } from "node:url";
import { findingLine } from "./check-report.js";
import type { Finding } from "./conditions.js";
import type { LoadedLogs } from "./read-logs.js";

const SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json";

/** What each condition means, as a rule's short description. */
const RULES: Record<string, string> = {
  error: "A JSON-RPC error, or a tool result with isError: true",
  invalid: "A message that is not valid JSON-RPC",
  deny: "A message or connection the policy denied",
  flag: "A message the policy flagged, or a multi-round retry with a state the server did not issue",
  pending: "A request never answered",
  mismatch: "Routing headers that disagree with the body, or a required one missing",
  drift: "A pinned tool changed, or a tool appeared after the server was pinned",
  deprecated: "Something the session's protocol revision deprecates or removes",
  incomplete: "Records may be missing from the log",
  "expect-tool": "A tool that was expected to be called was not (--expect-tool)",
  "forbid-tool": "A forbidden tool was called (--forbid-tool)",
  latency: "An answer slower than --max-latency",
  "list-tokens": "A tools/list estimated at more tokens than --max-list-tokens",
  "result-tokens": "A tool result estimated at more tokens than --max-result-tokens",
};

/** Conditions that say something is wrong; the others are worth a look (warnings). */
const ERRORS = new Set(["error", "invalid", "deny", "incomplete", "expect-tool", "forbid-tool"]);

/** A file name as an artifact URI: relative to the working folder when inside it, else a file: URI. */
function artifactUri(file: string, cwd: string): string {
  const absolute = path.resolve(cwd, file);
  const relative = path.relative(cwd, absolute);
  if (relative !== "" && !relative.startsWith("..") && !path.isAbsolute(relative)) return relative.split(path.sep).map(encodeURIComponent).join("/");
  return pathToFileURL(absolute).href;
}

export function sarifReport(findings: readonly Finding[], checked: readonly string[], logs: LoadedLogs, version: string, cwd = process.cwd()): string {
  const rules = checked.map((id) => ({ id, shortDescription: { text: RULES[id] ?? id }, defaultConfiguration: { level: ERRORS.has(id) ? "error" : "warning" } }));
  const results = findings.map((f) => {
    const origin = f.at ?? (f.record ? logs.origins.get(f.record) : undefined);
    const location =
      origin && origin.file !== "(stdin)"
        ? [{ physicalLocation: { artifactLocation: { uri: artifactUri(origin.file, cwd) }, region: { startLine: origin.line } } }]
        : [];
    const index = checked.indexOf(f.condition);
    return {
      ruleId: f.condition,
      ...(index >= 0 ? { ruleIndex: index } : {}),
      level: ERRORS.has(f.condition) ? "error" : "warning",
      message: { text: findingLine(f) },
      ...(location.length > 0 ? { locations: location } : {}),
    };
  });
  const report = {
    $schema: SCHEMA,
    version: "2.1.0",
    runs: [{ tool: { driver: { name: "mcp-wiretap", version, rules } }, results }],
  };
  return `${JSON.stringify(report, null, 2)}\n`;
}
