/**
 * The `tail` view in-process: the formatter on the recorded fixture logs (file snapshots, no colour), the
 * filters one by one, colour rules, and lines that are not records. The CLI itself is in tail-cli.test.ts.
 *
 * The fixtures are real proxy logs made by test/fixtures/make-session-log.ts (run manually).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { painter, printable, useColor } from "../../src/saved-logs/color.js";
import { parseRecord } from "../../src/saved-logs/parse-record.js";
import { compileFilters, hostOf, splitList, type LogRecord, type RecordFilters } from "../../src/saved-logs/filters.js";
import { TailFormatter } from "../../src/cli/tail/formatter.js";
import { bytes, clockTime, duration, shortSession } from "../../src/saved-logs/layout.js";
import { LineSplitter } from "../../src/saved-logs/reader.js";
import { UNSAFE_CHARS } from "../helpers/unsafe-chars.js";

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "fixtures");
const lines = (name: string): string[] => readFileSync(path.join(FIXTURES, name), "utf8").split("\n").filter((l) => l !== "");
const records = (name: string): LogRecord[] => lines(name).map((l) => JSON.parse(l) as LogRecord);

/** What `tail` prints for these lines (no colour), as the command does it. */
function view(input: string[], opts: { color?: boolean; allHttp?: boolean; filters?: RecordFilters } = {}): string[] {
  const formatter = new TailFormatter({ color: opts.color ?? false, allHttp: opts.allHttp ?? false });
  const matches = compileFilters(opts.filters ?? {});
  const out: string[] = [];
  for (const line of input) {
    const record = parseRecord(line);
    if (record === null) {
      out.push(formatter.formatRaw(line));
      continue;
    }
    formatter.observe(record);
    if (!matches(record)) continue;
    const text = formatter.format(record);
    if (text !== null) out.push(text);
  }
  return out;
}

const select = (name: string, filters: RecordFilters): LogRecord[] => records(name).filter(compileFilters(filters));

describe("tail view of the recorded logs", () => {
  it("matches the snapshot (monitor-mode tour)", async () => {
    await expect(view(lines("session.ndjson")).join("\n") + "\n").toMatchFileSnapshot("../fixtures/session.tail.txt");
  });

  it("matches the snapshot (enforce mode)", async () => {
    await expect(view(lines("session-enforce.ndjson")).join("\n") + "\n").toMatchFileSnapshot("../fixtures/session-enforce.tail.txt");
  });

  it("has one line per MCP message, session and failure; hides successful MCP http records", () => {
    const all = records("session.ndjson");
    const out = view(lines("session.ndjson"));
    const rpc = all.filter((r) => r.event === "rpc").length;
    const sessions = all.filter((r) => r.event === "session").length;
    const shownHttp = all.filter((r) => r.event === "http" && ((r.status as number) >= 400 || r.status === null || ((r.error as LogRecord | undefined)?.code ?? "client_aborted") !== "client_aborted" || r.path === "/favicon.ico")).length;
    const others = all.filter((r) => !["rpc", "session", "http"].includes(r.event as string)).length;
    expect(out).toHaveLength(rpc + sessions + shownHttp + others);
    expect(out.filter((l) => l.includes(" http "))).toHaveLength(shownHttp);
    expect(view(lines("session.ndjson"), { allHttp: true })).toHaveLength(rpc + sessions + all.filter((r) => r.event === "http").length + others);
  });

  it("an invalid body with no readable id and no known size shows neither `#null` nor `0B`", () => {
    const base = { level: "warn", time: "2026-11-22T07:35:39.904Z", event: "rpc", session: null, direction: "client_to_server", kind: "invalid", id: null, method: null };
    const [unknown, sized] = view([
      JSON.stringify({ ...base, bytes: 0, reason: "body_truncated: JSON body is larger than the inspection limit" }),
      JSON.stringify({ ...base, bytes: 9, reason: "invalid_json: invalid JSON (Unexpected token)" }),
    ]);
    expect(unknown).toMatch(/→ INVALID +— body_truncated/);
    expect(unknown).not.toMatch(/#null|0B/);
    expect(sized).toMatch(/→ INVALID +9B {2}— invalid_json/);
  });

  it("draws answers under their request, progress with ⋯ n/total, and marks unanswered and invalid messages", () => {
    const out = view(lines("session.ndjson"));
    const at = (re: RegExp) => out.findIndex((l) => re.test(l));
    const call = at(/→ request +#4 .*tools\/call trigger-long-running-operation/);
    expect(call).toBeGreaterThan(0);
    expect(out[call + 1]).toMatch(/← ├ progress +#4 +\d+ms +103B {2}⋯ 1\/3 {2}tools\/call trigger-long-running-operation/);
    expect(out[call + 2]).toMatch(/⋯ 2\/3/);
    expect(out[call + 3]).toMatch(/⋯ 3\/3/);
    expect(out[call + 4]).toMatch(/← └ response +#4 +\d+ms +139B {2}tools\/call trigger-long-running-operation$/);
    expect(out.some((l) => /→ (└ )?UNANSWERED +#abandone… .*session ended \(deleted\)/.test(l))).toBe(true);
    expect(out.some((l) => /→ INVALID +#77 .*no method, result or error/.test(l))).toBe(true);
    expect(out.some((l) => /→ ├ cancel +#7 .*notifications\/cancelled {2}of tools\/call trigger-long-running-operation/.test(l))).toBe(true);
    expect(out.some((l) => /── session [0-9a-f]{8} started: client fixture-client 1\.2\.0 ↔ server mcp-servers\/everything 2\.0\.0, protocol 2025-11-25/.test(l))).toBe(true);
    expect(out.some((l) => /── session [0-9a-f]{8} ended \(deleted\) after/.test(l))).toBe(true);
    expect(out.some((l) => /✗ REFUSED +400 .*this is a proxy/.test(l))).toBe(true);
    expect(out.some((l) => /⇄ http +502 .*upstream_connect/.test(l))).toBe(true);
    // Legacy session: the short id is the sessionId value, not "/message".
    expect(out.some((l) => / [0-9a-f]{8} ── session [0-9a-f]{8} started: client legacy-client/.test(l))).toBe(true);
    expect(out.join("\n")).not.toContain("/message ");
  });

  it("shows decisions: ALLOW hidden, FLAG and DENY with rule names, DENY* when enforced", () => {
    const monitor = view(lines("session.ndjson"));
    expect(monitor.join("\n")).not.toMatch(/ALLOW/i);
    expect(monitor.filter((l) => l.includes("FLAG audit-arithmetic"))).toHaveLength(2);
    expect(monitor.filter((l) => l.includes("FLAG detector:secrets"))).toHaveLength(2);
    expect(monitor.filter((l) => /DENY no-rm-rf$/.test(l))).toHaveLength(1);
    const enforce = view(lines("session-enforce.ndjson"));
    expect(enforce.filter((l) => l.includes("DENY* no-env-dump (not forwarded; the client got a policy error)"))).toHaveLength(1);
  });

  it("times are UTC HH:MM:SS.mmm", () => {
    const first = records("session.ndjson")[0]!;
    expect(view(lines("session.ndjson"))[0]!.slice(0, 12)).toBe((first.time as string).slice(11, 23));
    expect(clockTime("2026-01-02T03:04:05.6Z")).toBe("03:04:05.600");
    expect(clockTime("2026-01-02T03:04:05Z")).toBe("03:04:05.000");
    expect(clockTime("2026-01-02T05:04:05.123+02:00")).toBe("03:04:05.123");
    expect(clockTime(null)).toBe("-".padEnd(12));
  });
});

/** Each record of a fixture beside the line the view prints for it (null: not shown). */
function shownLines(name: string): { record: LogRecord; line: string | null }[] {
  const formatter = new TailFormatter({ color: false, allHttp: false });
  return records(name).map((record) => {
    formatter.observe(record);
    return { record, line: formatter.format(record) };
  });
}

/**
 * An independent reading: what a user checks a line against, from the record's own fields and not from the
 * formatter's helpers (the snapshots above were written by the formatter itself).
 */
describe("tail lines read against their records", () => {
  const fixtures = ["session.ndjson", "session-enforce.ndjson"];
  const shortId = (session: unknown): string => {
    if (typeof session !== "string") return "-";
    const legacy = /sessionId=([^&]+)/.exec(session);
    return (legacy ? legacy[1]! : session).slice(0, 8);
  };
  /** The size as shown, back in bytes: within the rounding of its unit. */
  const sizeShown = (line: string): { bytes: number; slack: number } | null => {
    const m = / (\d+(?:\.\d)?)(B|kB|MB) /.exec(line);
    if (!m) return null;
    const unit = { B: 1, kB: 1000, MB: 1_000_000 }[m[2] as "B" | "kB" | "MB"];
    return { bytes: Number(m[1]) * unit, slack: unit === 1 ? 0 : (m[1]!.includes(".") ? 0.05 : 0.5) * unit };
  };

  for (const name of fixtures) {
    it(`every message's line says its time, session, way, id, size, method, tool and decision (${name})`, () => {
      const rpc = shownLines(name).filter(({ record }) => record.event === "rpc");
      expect(rpc.length).toBeGreaterThan(0);
      for (const { record: r, line } of rpc) {
        const what = JSON.stringify(r).slice(0, 200);
        expect(line, what).not.toBeNull();
        const text = line!;
        expect(text.slice(0, 12), what).toBe((r.time as string).slice(11, 23));
        expect(text.slice(13).split(" ")[0], what).toBe(shortId(r.session));
        expect(text, what).toContain(r.direction === "client_to_server" ? " → " : " ← ");
        if (r.kind === "invalid" || r.kind === "unanswered") expect(text, what).toContain(` ${(r.kind as string).toUpperCase()} `);
        if (r.kind === "request" || r.kind === "response" || r.kind === "error") expect(text, what).toContain(` ${r.kind as string} `);
        if (r.id !== undefined && r.kind !== "notification") {
          const id = String(r.id);
          expect(text, what).toContain(`#${id.length > 9 ? `${id.slice(0, 8)}…` : id}`);
        }
        if (r.kind !== "unanswered") {
          const size = sizeShown(text);
          expect(size, what).not.toBeNull();
          expect(Math.abs(size!.bytes - (r.bytes as number)), what).toBeLessThanOrEqual(size!.slack);
        }
        if (typeof r.latencyMs === "number" && r.latencyMs < 1000) expect(text, what).toMatch(new RegExp(` ${Math.round(r.latencyMs)}ms `));
        const related = r.related as { id: unknown; method: string; tool?: string | null; elapsedMs: number } | undefined;
        if (r.method === "notifications/progress" && related) {
          // Progress is drawn under its request: that request's id, time since it, method and tool.
          const params = r.params as { progress: number; total?: number };
          expect(text, what).toContain(` progress `);
          expect(text, what).toContain(`#${String(related.id)} `);
          expect(text, what).toContain(` ${related.elapsedMs}ms `);
          expect(text, what).toContain(`⋯ ${params.progress}${params.total !== undefined ? `/${params.total}` : ""}  ${related.method}${related.tool ? ` ${related.tool}` : ""}`);
        } else if (typeof r.method === "string") expect(text, what).toContain(r.method);
        if (typeof r.tool === "string") expect(text, what).toContain(`${r.method as string} ${r.tool}`);
        const decision = r.decision as { action: string; enforced: boolean; rules: { name: string }[] } | undefined;
        if (decision && decision.action !== "allow") {
          const badge = `${decision.action.toUpperCase()}${decision.enforced ? "*" : ""} `;
          expect(text, what).toContain(`${badge}${decision.rules.map((rule) => rule.name).join(", ")}`);
        } else expect(text, what).not.toMatch(/ (FLAG|DENY)/);
        if (r.kind === "invalid") expect(text, what).toContain(r.reason as string);
        if (r.kind === "unanswered") expect(text, what).toContain(r.reason as string);
        if (r.kind === "error") expect(text, what).toContain(`${(r.error as { code: number }).code} ${(r.error as { message: string }).message}`);
      }
    });

    it(`every session's lines name its client, server, protocol and end (${name})`, () => {
      const sessions = shownLines(name).filter(({ record }) => record.event === "session");
      expect(sessions.length).toBeGreaterThan(0);
      for (const { record: r, line } of sessions) {
        expect(line).not.toBeNull();
        const id = shortId(r.session);
        if (r.phase === "start") {
          const client = r.clientInfo as { name: string; version: string } | undefined;
          const server = r.serverInfo as { name: string; version: string } | undefined;
          expect(line).toContain(`── session ${id} started: client ${client?.name} ${client?.version} ↔ server ${server?.name} ${server?.version}, protocol ${r.protocolVersion as string} (${r.transport as string}, ${r.server as string})`);
        } else {
          expect(line).toContain(`── session ${id} ended (${r.reason as string}) after `);
          expect(line).toMatch(new RegExp(`, ${r.messages as number} messages$`));
        }
      }
    });
  }
});

describe("tail filters", () => {
  it("--tool selects the tool's calls, answers, progress and cancellations", () => {
    expect(select("session.ndjson", { tool: ["get-sum"] }).map((r) => r.kind)).toEqual(["request", "response"]);
    const long = select("session.ndjson", { tool: ["trigger-long-*"] });
    expect(long.every((r) => r.tool === "trigger-long-running-operation" || (r.related as LogRecord).tool === "trigger-long-running-operation")).toBe(true);
    expect(long.filter((r) => r.method === "notifications/progress")).toHaveLength(3);
    expect(long.filter((r) => r.method === "notifications/cancelled")).toHaveLength(1);
    expect(long.filter((r) => r.kind === "unanswered")).toHaveLength(1);
  });

  it("--method is a glob on the method (or the request's, for progress)", () => {
    expect(select("session.ndjson", { method: ["notifications/progress"] })).toHaveLength(3);
    expect(select("session.ndjson", { method: ["resources/*"] }).map((r) => `${r.kind as string} ${r.method as string}`)).toEqual([
      "request resources/list",
      "response resources/list",
      "request resources/read",
      "response resources/read",
    ]);
    expect(select("session.ndjson", { method: ["PING"] }).every((r) => r.method === "ping")).toBe(true);
  });

  it("--decision selects by policy action; lists are alternatives", () => {
    expect(select("session.ndjson", { decision: ["deny"] }).map((r) => r.tool)).toEqual(["echo"]);
    expect(select("session.ndjson", { decision: ["flag"] })).toHaveLength(4);
    expect(select("session.ndjson", { decision: ["flag", "deny"] })).toHaveLength(5);
    const allowed = select("session.ndjson", { decision: ["allow"] });
    expect(allowed.length).toBeGreaterThan(20);
    expect(allowed.every((r) => (r.decision as LogRecord).action === "allow")).toBe(true);
  });

  it("--session is a prefix of the id (or of a legacy session's sessionId)", () => {
    const all = records("session.ndjson");
    const legacy = all.find((r) => r.event === "session" && r.transport === "http+sse")!;
    const id = new URLSearchParams((legacy.session as string).split("?")[1]).get("sessionId")!;
    const picked = select("session.ndjson", { session: [id.slice(0, 6)] });
    expect(picked.filter((r) => r.event === "session").map((r) => r.phase)).toEqual(["start", "end"]);
    expect(picked.filter((r) => r.event === "rpc").length).toBe(all.filter((r) => r.event === "rpc" && r.transport === "http+sse").length);
    // The POSTs to the legacy endpoint carry the session in their path.
    expect(picked.filter((r) => r.event === "http").map((r) => r.method)).toEqual(["POST", "POST", "POST", "POST"]);
    const streamable = all.find((r) => r.event === "session" && r.transport === "streamable-http")!.session as string;
    const byHeader = select("session.ndjson", { session: [streamable.slice(0, 8)] });
    expect(byHeader.some((r) => r.event === "http" && r.method === "DELETE")).toBe(true);
    expect(byHeader.every((r) => r.session === streamable || (r.requestHeaders as LogRecord)?.["mcp-session-id"] === streamable)).toBe(true);
  });

  it("--server matches host:port or the host alone", () => {
    const all = records("session.ndjson");
    const failed = all.find((r) => r.event === "http" && r.status === 502)!.server as string;
    expect(select("session.ndjson", { server: [failed] }).map((r) => `${r.event as string} ${(r.kind as string) ?? ""}`.trim())).toEqual(["rpc request", "http", "rpc unanswered"]);
    const withServer = all.filter((r) => typeof r.server === "string").length;
    expect(select("session.ndjson", { server: ["127.0.0.1"] })).toHaveLength(withServer);
    expect(select("session.ndjson", { server: ["*.example.com"] })).toHaveLength(0);
    expect(hostOf("[::1]:443")).toBe("::1");
    expect(hostOf("mcp.example.com:443")).toBe("mcp.example.com");
  });

  it("combines filters (all of them must match); comma lists split", () => {
    expect(splitList(["echo,get-sum", " x ", ""])).toEqual(["echo", "get-sum", "x"]);
    const picked = select("session.ndjson", { tool: splitList(["echo,get-sum"]), decision: ["flag"] });
    expect(picked.map((r) => `${r.tool as string} ${r.kind as string}`)).toEqual(["get-sum request", "get-sum response", "echo request", "echo response"]);
    // A record without the field does not match: no session lines with a tool filter.
    expect(select("session.ndjson", { tool: ["echo"] }).every((r) => r.event === "rpc")).toBe(true);
  });

  it("filters the view too: a hidden request does not capture the next answer", () => {
    const out = view(lines("session.ndjson"), { filters: { method: ["tools/list"] } });
    expect(out).toHaveLength(2);
    expect(out[1]).toMatch(/← └ response +#1 /);
    const answersOnly = view(lines("session.ndjson"), { filters: { decision: ["flag"] } });
    expect(answersOnly.every((l) => l.includes("FLAG"))).toBe(true);
  });
});

describe("colour", () => {
  it("FORCE_COLOR forces, NO_COLOR disables, else only on a terminal", () => {
    expect(useColor({}, true)).toBe(true);
    expect(useColor({}, false)).toBe(false);
    expect(useColor({ NO_COLOR: "1" }, true)).toBe(false);
    expect(useColor({ NO_COLOR: "" }, true)).toBe(true);
    expect(useColor({ FORCE_COLOR: "1" }, false)).toBe(true);
    expect(useColor({ FORCE_COLOR: "1", NO_COLOR: "1" }, false)).toBe(true);
    expect(useColor({ FORCE_COLOR: "0" }, true)).toBe(false);
    expect(useColor({ FORCE_COLOR: "" }, false)).toBe(false);
  });

  it("paints badges and marks; plain output has no escape at all", () => {
    const colored = view(lines("session-enforce.ndjson"), { color: true }).join("\n");
    expect(colored).toContain("\u001b[41m"); // DENY* on red
    const plain = view(lines("session.ndjson")).join("\n");
    expect(plain).not.toContain("\u001b");
    const p = painter(true);
    expect(p(["yellow", "bold"], "FLAG")).toBe("\u001b[1m\u001b[33mFLAG\u001b[39m\u001b[22m");
    expect(painter(false)("red", "x")).toBe("x");
  });
});

describe("lines that are not records", () => {
  it("are passed through (dimmed when coloured), control characters made visible", () => {
    const input = ["plain text", "{not json", "[1,2]", "42", '"str"', "null", "x\u001b[2Jy"];
    expect(view(input)).toEqual(["plain text", "{not json", "[1,2]", "42", '"str"', "null", "x\\u001b[2Jy"]);
    expect(view(["hello"], { color: true })).toEqual(["\u001b[2mhello\u001b[22m"]);
    expect(printable("a\tb\nc\u202ed")).toBe("a b\\nc\\u202ed");
  });

  it("show every control, bidi and invisible character of a record escaped, in every kind of line", () => {
    for (const c of UNSAFE_CHARS) {
      const t = `x${c}y`;
      const recordsWithIt: LogRecord[] = [
        { event: "rpc", kind: "request", time: "2026-01-01T00:00:00.000Z", session: t, direction: "client_to_server", id: t, method: t, tool: t, bytes: 1, decision: { action: "deny", enforced: true, rules: [{ name: t, reason: t }] } },
        { event: "rpc", kind: "error", time: "2026-01-01T00:00:00.000Z", session: t, direction: "server_to_client", id: 1, method: t, error: { code: 1, message: t } },
        { event: "rpc", kind: "invalid", time: "2026-01-01T00:00:00.000Z", session: null, direction: "server_to_client", reason: t },
        { event: "session", phase: "start", time: "2026-01-01T00:00:00.000Z", session: t, server: t, transport: "streamable-http", clientInfo: { name: t, version: t }, serverInfo: { name: t } },
        { event: "http", time: "2026-01-01T00:00:00.000Z", method: t, server: t, path: t, status: 500, error: { code: t, message: t } },
        { event: "refused", time: "2026-01-01T00:00:00.000Z", stage: t, reason: t, status: 400 },
        { event: "websocket", time: "2026-01-01T00:00:00.000Z", server: t, path: t, status: 101 },
        { event: "auth", time: "2026-01-01T00:00:00.000Z", step: t, server: t, path: t, status: 401 },
        { event: t, time: t },
      ];
      const shown = view(recordsWithIt.map((r) => JSON.stringify(r)), { allHttp: true }).join("\n");
      expect(shown.length).toBeGreaterThan(0);
      for (let k = 0; k < c.length; k++) expect(shown, `U+${c.codePointAt(0)!.toString(16)}`).not.toContain(c[k]);
      expect(view([JSON.stringify(recordsWithIt[0])])[0]).toContain(`\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
    }
  });

  it("never crash the formatter, whatever the record holds", () => {
    const events = fc.constantFrom("rpc", "http", "session", "start", "stop", "refused", "policy", "tunnel", "websocket", "auth", "other", undefined);
    const kinds = fc.constantFrom("request", "response", "notification", "error", "invalid", "unanswered", 5, null, undefined);
    const record = fc.record(
      {
        event: events,
        kind: kinds,
        time: fc.oneof(fc.string(), fc.integer(), fc.constant("2026-01-01T00:00:00.000Z")),
        id: fc.jsonValue(),
        method: fc.oneof(fc.string(), fc.constant("notifications/progress"), fc.constant("notifications/cancelled"), fc.integer()),
        session: fc.oneof(fc.string(), fc.constant(null), fc.constant("/message?sessionId=abc")),
        related: fc.jsonValue(),
        params: fc.jsonValue(),
        decision: fc.jsonValue(),
        error: fc.jsonValue(),
        status: fc.oneof(fc.integer(), fc.constant(null), fc.string()),
        requestHeaders: fc.jsonValue(),
        tls: fc.jsonValue(),
        batch: fc.jsonValue(),
        phase: fc.constantFrom("start", "end", 3),
        clientInfo: fc.jsonValue(),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.array(record, { maxLength: 8 }), (list) => {
        const formatter = new TailFormatter({ color: true });
        const matches = compileFilters({ server: ["*"], session: ["a"], method: ["*"], tool: ["*"], decision: ["flag"] });
        for (const r of list) {
          formatter.observe(r as LogRecord);
          matches(r as LogRecord);
          const out = formatter.format(r as LogRecord);
          if (out !== null) expect(typeof out).toBe("string");
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe("helpers", () => {
  it("sizes, durations, short sessions", () => {
    expect([0, 999, 1000, 1234, 9949, 9951, 123_456, 999_600, 5_600_000].map(bytes)).toEqual(["0B", "999B", "1.0kB", "1.2kB", "9.9kB", "10kB", "123kB", "1.0MB", "5.6MB"]);
    expect([0, 12.4, 999, 1000, 1340, 42_000, 185_000].map(duration)).toEqual(["0ms", "12ms", "999ms", "1.0s", "1.3s", "42s", "3m05s"]);
    expect(shortSession(null)).toBe("-");
    expect(shortSession("9ce34ff6-1111-2222")).toBe("9ce34ff6");
    expect(shortSession("/message?sessionId=25a8027f-8271")).toBe("25a8027f");
    expect(shortSession("/messages/abcdef0123")).toBe("messages");
  });

  it("splits lines across chunks, CRLF and UTF-8 split mid-character", () => {
    const s = new LineSplitter();
    const bytesOf = Buffer.from("a→b\r\nsecond", "utf8");
    const out = [...s.push(bytesOf.subarray(0, 2)), ...s.push(bytesOf.subarray(2)), ...s.push(Buffer.from(" line\n")), ...s.flush()];
    expect(out).toEqual(["a→b", "second line"]);
    expect(new LineSplitter().flush()).toEqual([]);
  });
});
