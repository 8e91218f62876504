import { str, type LogRecord } from "../saved-logs/filters.js";
import { findingLine } from "./check-report.js";
import type { Finding } from "./conditions.js";

/** Where a finding or a record belongs in the report: its server and session (or the log as a whole). */
interface Suite {
  name: string;
  server: string | null;
  session: string | null;
  first: string | null;
  last: string | null;
  findings: Finding[];
}

const LOG_SUITE = "log";

/**
 * JUnit XML in the Apache Ant layout that CI parsers read (Jenkins, GitLab, GitHub test reporters):
 * one `testsuite` per MCP session (per server for traffic without sessions, plus `log` for the log as a
 * whole), one `testcase` per checked condition in it, failed when the condition holds there.
 */
export function junitXml(records: readonly LogRecord[], findings: readonly Finding[], checked: readonly string[], hostname: string): string {
  const suites = new Map<string, Suite>();
  const suiteOf = (server: string | null, session: string | null): Suite => {
    const name = server === null && session === null ? LOG_SUITE : `${server ?? "?"} ${session ?? "(no session)"}`;
    let suite = suites.get(name);
    if (!suite) {
      suite = { name, server, session, first: null, last: null, findings: [] };
      suites.set(name, suite);
    }
    return suite;
  };
  const log = suiteOf(null, null);
  // A request sent before its session had a name (initialize) belongs to the session its exchange started.
  const sessionOfFlow = new Map<string, string>();
  for (const r of records) if (r.event === "rpc" && typeof r.flow === "string" && typeof r.session === "string") sessionOfFlow.set(r.flow, r.session);
  const sessionOf = (r: { flow?: unknown; session?: unknown }): string | null => str(r.session) ?? sessionOfFlow.get(str(r.flow) ?? "") ?? null;
  for (const r of records) {
    const time = str(r.time);
    for (const suite of r.event === "rpc" && typeof r.server === "string" ? [suiteOf(r.server, sessionOf(r)), log] : [log]) {
      if (time === null) continue;
      suite.first ??= time;
      suite.last = time;
    }
  }
  for (const f of findings) suiteOf(f.server, f.server === null ? null : sessionOf(f)).findings.push(f);

  const body = [...suites.values()].map((suite, id) => {
    const cases = checked.map((condition) => {
      const hits = suite.findings.filter((f) => f.condition === condition);
      const name = attr(condition);
      const classname = attr(`mcp-wiretap.${suite.name}`);
      if (hits.length === 0) return `    <testcase name="${name}" classname="${classname}" time="0"/>`;
      const message = attr(`${hits.length} × ${condition}: ${hits[0]!.reason}`);
      return `    <testcase name="${name}" classname="${classname}" time="0">\n      <failure message="${message}" type="${name}">${text(hits.map(findingLine).join("\n"))}</failure>\n    </testcase>`;
    });
    const failures = checked.filter((c) => suite.findings.some((f) => f.condition === c)).length;
    const props = [
      ["server", suite.server],
      ["session", suite.session],
    ]
      .filter(([, v]) => v !== null)
      .map(([k, v]) => `      <property name="${k}" value="${attr(v!)}"/>`);
    return [
      `  <testsuite name="${attr(suite.name)}" package="mcp-wiretap" id="${id}" timestamp="${timestamp(suite.first)}" hostname="${attr(hostname || "localhost")}" tests="${checked.length}" failures="${failures}" errors="0" time="${seconds(suite.first, suite.last)}">`,
      props.length > 0 ? `    <properties>\n${props.join("\n")}\n    </properties>` : "    <properties/>",
      ...cases,
      "    <system-out/>",
      "    <system-err/>",
      "  </testsuite>",
    ].join("\n");
  });
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>\n${body.join("\n")}\n</testsuites>\n`;
}

/** `2026-11-22T07:35:38` (the schema's pattern: no fraction, no zone; the log's times are UTC). */
function timestamp(iso: string | null): string {
  const t = iso === null ? NaN : Date.parse(iso);
  return new Date(Number.isNaN(t) ? 0 : t).toISOString().slice(0, 19);
}

function seconds(first: string | null, last: string | null): string {
  if (first === null || last === null) return "0";
  const ms = Date.parse(last) - Date.parse(first);
  return Number.isFinite(ms) && ms > 0 ? (ms / 1000).toFixed(3) : "0";
}

/** Characters XML 1.0 cannot carry at all (most C0 controls, lone surrogates, U+FFFE/U+FFFF) become U+FFFD. */
function xmlSafe(s: string): string {
  return s.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd");
}

function text(s: string): string {
  return xmlSafe(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function attr(s: string): string {
  return text(s).replace(/"/g, "&quot;").replace(/\n/g, "&#10;").replace(/\r/g, "&#13;").replace(/\t/g, "&#9;");
}

