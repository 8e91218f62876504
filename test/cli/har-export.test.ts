/**
 * `mcp-wiretap export --har`: HAR 1.2 from the recorded fixture logs (real proxy runs, see
 * test/fixtures/make-session-log.ts). The structure is checked against the HAR 1.2 spec's required fields
 * by a small validator below (no schema package); the CLI cases need the build (`npm run build`).
 */
import { readFileSync } from "node:fs";
import { chmod, lstat, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildHar, type Har, type HarEntry } from "../../src/cli/har/har.js";
import { compileFilters, type LogRecord } from "../../src/saved-logs/filters.js";
import { REPO_ROOT, runCli } from "../helpers/proxy-harness.js";

const FIXTURES = path.join(REPO_ROOT, "test", "fixtures");
const load = (name: string): LogRecord[] =>
  readFileSync(path.join(FIXTURES, name), "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as LogRecord);
const CREATOR = { name: "mcp-wiretap", version: "0.0.0-test" };

// ------------------------------------------------------------------------------------------------ validator

/** The required members of HAR 1.2 (http://www.softwareishard.com/blog/har-12-spec/); returns the problems. */
function validateHar(har: unknown): string[] {
  const problems: string[] = [];
  const check = (ok: boolean, what: string) => {
    if (!ok) problems.push(what);
  };
  const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
  const isNum = (v: unknown) => typeof v === "number" && Number.isFinite(v);
  const isStr = (v: unknown) => typeof v === "string";
  const nameValues = (v: unknown, where: string) => {
    check(Array.isArray(v), `${where} is an array`);
    if (Array.isArray(v)) v.forEach((x, i) => check(isObj(x) && isStr(x.name) && isStr(x.value), `${where}[${i}] has name and value strings`));
  };
  const iso = (v: unknown) => isStr(v) && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(v as string) && !Number.isNaN(Date.parse(v as string));

  if (!isObj(har) || !isObj(har.log)) return ["log is an object"];
  const log = har.log;
  check(log.version === "1.2", "log.version is 1.2");
  check(isObj(log.creator) && isStr(log.creator.name) && isStr(log.creator.version), "log.creator has name and version");
  check(Array.isArray(log.entries), "log.entries is an array");
  if (log.comment !== undefined) check(isStr(log.comment), "log.comment is a string");
  for (const [i, e] of (Array.isArray(log.entries) ? log.entries : []).entries()) {
    const at = `entries[${i}]`;
    if (!isObj(e)) {
      problems.push(`${at} is an object`);
      continue;
    }
    check(iso(e.startedDateTime), `${at}.startedDateTime is ISO 8601`);
    check(isNum(e.time) && (e.time as number) >= 0, `${at}.time is a number ≥ 0`);
    const req = e.request;
    if (!isObj(req)) problems.push(`${at}.request is an object`);
    else {
      check(isStr(req.method), `${at}.request.method`);
      check(isStr(req.url) && URL.canParse(req.url as string), `${at}.request.url is an absolute URL`);
      check(isStr(req.httpVersion), `${at}.request.httpVersion`);
      nameValues(req.cookies, `${at}.request.cookies`);
      nameValues(req.headers, `${at}.request.headers`);
      nameValues(req.queryString, `${at}.request.queryString`);
      check(isNum(req.headersSize), `${at}.request.headersSize`);
      check(isNum(req.bodySize), `${at}.request.bodySize`);
      if (req.postData !== undefined) check(isObj(req.postData) && isStr(req.postData.mimeType) && isStr(req.postData.text), `${at}.request.postData has mimeType and text`);
    }
    const res = e.response;
    if (!isObj(res)) problems.push(`${at}.response is an object`);
    else {
      check(isNum(res.status), `${at}.response.status`);
      check(isStr(res.statusText), `${at}.response.statusText`);
      check(isStr(res.httpVersion), `${at}.response.httpVersion`);
      nameValues(res.cookies, `${at}.response.cookies`);
      nameValues(res.headers, `${at}.response.headers`);
      check(isObj(res.content) && isNum(res.content.size) && isStr(res.content.mimeType), `${at}.response.content has size and mimeType`);
      if (isObj(res.content) && res.content.text !== undefined) check(isStr(res.content.text), `${at}.response.content.text is a string`);
      check(isStr(res.redirectURL), `${at}.response.redirectURL`);
      check(isNum(res.headersSize), `${at}.response.headersSize`);
      check(isNum(res.bodySize), `${at}.response.bodySize`);
    }
    check(isObj(e.cache), `${at}.cache is an object`);
    const t = e.timings;
    if (!isObj(t)) problems.push(`${at}.timings is an object`);
    else {
      for (const k of ["send", "wait", "receive"]) check(isNum(t[k]) && (t[k] as number) >= 0, `${at}.timings.${k} is a number ≥ 0`);
      for (const k of ["blocked", "dns", "connect", "ssl"]) if (t[k] !== undefined) check(isNum(t[k]) && (t[k] as number) >= -1, `${at}.timings.${k} ≥ -1`);
      const sum = ["blocked", "dns", "connect", "send", "wait", "receive"].map((k) => t[k] as number).filter((v) => v !== undefined && v >= 0).reduce((a, b) => a + b, 0);
      check(Math.abs(sum - (e.time as number)) < 1, `${at}.time is the sum of its timings`);
    }
    for (const key of Object.keys(e)) {
      check(["startedDateTime", "time", "request", "response", "cache", "timings", "serverIPAddress", "connection", "comment", "pageref"].includes(key) || key.startsWith("_"), `${at}: unknown member ${key} (custom ones start with _)`);
    }
  }
  return problems;
}

/** The SSE events of a text/event-stream body: [{event, id, data}]. */
function sseEvents(text: string): { event?: string; id?: string; data: string }[] {
  return text
    .split("\n\n")
    .filter((block) => block.trim() !== "")
    .map((block) => {
      const out: { event?: string; id?: string; data: string } = { data: "" };
      const data: string[] = [];
      for (const line of block.split("\n")) {
        const colon = line.indexOf(": ");
        const [field, value] = colon < 0 ? [line, ""] : [line.slice(0, colon), line.slice(colon + 2)];
        if (field === "event") out.event = value;
        else if (field === "id") out.id = value;
        else if (field === "data") data.push(value);
      }
      out.data = data.join("\n");
      return out;
    });
}

const entryOf = (har: Har, flow: string): HarEntry => har.log.entries.find((e) => e._mcp.flow === flow)!;

// ------------------------------------------------------------------------------------------------ tests

describe("HAR export of the recorded logs", () => {
  const records = load("session.ndjson");
  const har = buildHar(records, { creator: CREATOR });

  it("is valid HAR 1.2: every required member, with the right types", () => {
    expect(validateHar(har)).toEqual([]);
    expect(validateHar(buildHar(load("session-enforce.ndjson"), { creator: CREATOR }))).toEqual([]);
    expect(validateHar(JSON.parse(JSON.stringify(har)))).toEqual([]);
    // The validator does catch problems.
    expect(validateHar({ log: { version: "1.1", creator: {}, entries: [{ time: -5 }] } }).length).toBeGreaterThan(5);
  });

  it("has one entry per http record, sorted by start time, with the request rebuilt", () => {
    const http = records.filter((r) => r.event === "http");
    expect(har.log.entries).toHaveLength(http.length);
    const starts = har.log.entries.map((e) => Date.parse(e.startedDateTime));
    expect(starts).toEqual([...starts].sort((a, b) => a - b));
    for (const r of http) {
      const e = entryOf(har, r.flow as string);
      expect(e.request.method).toBe(r.method);
      expect(e.response.status).toBe(r.status ?? 0);
      expect(e.time).toBe(r.durationMs);
      expect(Date.parse(e.startedDateTime) + e.time).toBe(Date.parse(r.time as string));
      expect(e.request.url).toBe(`https://${r.server as string}${r.path as string}`);
      expect(e.request.headers.length).toBe(Object.keys(r.requestHeaders as object).length);
      expect(e.serverIPAddress).toBe("127.0.0.1");
    }
    const legacyPost = har.log.entries.find((e) => e.request.url.includes("/message?sessionId="))!;
    expect(legacyPost.request.queryString).toEqual([{ name: "sessionId", value: expect.stringMatching(/^[0-9a-f-]{36}$/) }]);
  });

  it("rebuilds request bodies from the client's messages (a batch as an array)", () => {
    const batchFlow = records.find((r) => r.event === "rpc" && r.id === "batch-1")!.flow as string;
    const batch = entryOf(har, batchFlow);
    expect(JSON.parse(batch.request.postData!.text)).toEqual([
      { jsonrpc: "2.0", id: "batch-1", method: "ping" },
      { jsonrpc: "2.0", id: "batch-2", method: "ping" },
    ]);
    const echo = records.find((r) => r.event === "rpc" && r.tool === "echo" && r.kind === "request")!;
    expect(JSON.parse(entryOf(har, echo.flow as string).request.postData!.text)).toEqual({ jsonrpc: "2.0", id: echo.id, method: "tools/call", params: echo.params });
    const invalid = records.find((r) => r.event === "rpc" && r.kind === "invalid")!;
    const invalidEntry = entryOf(har, invalid.flow as string);
    expect(JSON.parse(invalidEntry.request.postData!.text)).toEqual({ jsonrpc: "2.0", id: 77 });
    expect(JSON.parse(invalidEntry.response.content.text!)).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error: Invalid JSON-RPC message" } });
    expect(invalidEntry.response.content.mimeType).toBe("application/json");
  });

  it("rebuilds event-stream responses as SSE text, every message in order", () => {
    const call = records.find((r) => r.event === "rpc" && r.kind === "request" && r.tool === "trigger-long-running-operation" && r.id === 4)!;
    const entry = entryOf(har, call.flow as string);
    expect(entry.response.content.mimeType).toBe("text/event-stream");
    const events = sseEvents(entry.response.content.text!);
    const logged = records.filter((r) => r.event === "rpc" && r.flow === call.flow && r.direction === "server_to_client");
    expect(events.map((e) => e.id)).toEqual(logged.map((r) => r.sseEventId));
    expect(events.every((e) => e.event === "message")).toBe(true);
    const messages = events.map((e) => JSON.parse(e.data) as Record<string, unknown>);
    expect(messages.map((m) => m.method ?? "response")).toEqual(["notifications/progress", "notifications/progress", "notifications/progress", "response"]);
    expect(messages.map((m) => (m.params as { progress?: number } | undefined)?.progress)).toEqual([1, 2, 3, undefined]);
    expect(messages[3]).toEqual({ jsonrpc: "2.0", id: 4, result: logged[3]!.result });
    expect(entry.response.content.text!.startsWith(`event: message\nid: ${logged[0]!.sseEventId as string}\ndata: {"jsonrpc":"2.0","method":"notifications/progress"`)).toBe(true);
  });

  it("puts every message of a legacy GET stream in its SSE body", () => {
    const get = records.find((r) => r.event === "http" && r.method === "GET" && r.path === "/sse")!;
    const entry = entryOf(har, get.flow as string);
    const logged = records.filter((r) => r.event === "rpc" && r.flow === get.flow && r.direction === "server_to_client");
    expect(logged.length).toBeGreaterThanOrEqual(4);
    const events = sseEvents(entry.response.content.text!);
    expect(events.map((e) => JSON.parse(e.data) as Record<string, unknown>).map((m) => m.id ?? m.method)).toEqual(logged.map((r) => (r.kind === "notification" ? r.method : r.id)));
    expect(entry.response.content.comment).toMatch(/`endpoint` event .* is not in the log/);
    expect(entry._mcp.transport).toBe("http+sse");
  });

  it("shows a truncated payload as its preview plus a note, never invented", () => {
    const list = records.find((r) => r.event === "rpc" && r.method === "tools/list" && r.kind === "response")!;
    const marker = list.result as { truncated: boolean; bytes: number; sha256: string; preview: string };
    expect(marker.truncated).toBe(true);
    const entry = entryOf(har, list.flow as string);
    const [event] = sseEvents(entry.response.content.text!);
    expect(event!.data).toBe(`{"jsonrpc":"2.0","id":1,"result":${marker.preview}…[mcp-wiretap: truncated, ${marker.bytes} bytes, ${marker.sha256}]}`);
    expect(entry.response.content.comment).toContain("truncated in the log");
    expect(entry._mcp.incomplete).toBe(true);
  });

  it("says where a body is not in the log (non-MCP, answered by the proxy)", () => {
    const favicon = har.log.entries.find((e) => e.request.url.endsWith("/favicon.ico"))!;
    expect(favicon.response.content.text).toBeUndefined();
    expect(favicon.response.content.comment).toMatch(/carried no MCP message/);
    const failed = har.log.entries.find((e) => e.response.status === 502)!;
    expect(failed.comment).toMatch(/^error: upstream_connect/);
    expect(failed.response.content.comment).toMatch(/answered by the proxy/);
    const enforced = buildHar(load("session-enforce.ndjson"), { creator: CREATOR });
    const denied = enforced.log.entries.find((e) => e._mcp.messages.some((m) => m.decision?.enforced))!;
    expect(denied.response.content.comment).toBe("mcp-wiretap: answered by the proxy itself (not forwarded; the client got a policy error); that answer is not in the log.");
    expect(denied._mcp.messages[0]).toMatchObject({ kind: "request", tool: "get-env", decision: { action: "deny", enforced: true, rules: ["no-env-dump"] } });
  });

  it("carries the exchange's MCP summary in _mcp", () => {
    const call = records.find((r) => r.event === "rpc" && r.tool === "get-sum" && r.kind === "request")!;
    const entry = entryOf(har, call.flow as string);
    expect(entry._mcp).toMatchObject({
      flow: call.flow,
      mode: "mitm",
      transport: "streamable-http",
      session: call.session,
      protocolVersion: "2025-11-25",
      messages: [
        { direction: "client_to_server", kind: "request", id: 3, method: "tools/call", tool: "get-sum", argsHash: call.argsHash, decision: { action: "flag", rules: ["audit-arithmetic"] } },
        { direction: "server_to_client", kind: "response", id: 3, latencyMs: expect.any(Number) },
      ],
    });
    const unanswered = har.log.entries.find((e) => e._mcp.messages.some((m) => m.kind === "unanswered" && m.id === "abandoned-1"))!;
    expect(unanswered._mcp.messages.find((m) => m.kind === "unanswered")!.reason).toBe("session ended (deleted)");
  });

  it("contains no credential: only redacted Authorization headers", () => {
    const text = JSON.stringify(har);
    expect(text).toContain("Bearer [redacted]");
    expect(text).not.toMatch(/Bearer (?!\[redacted\])/);
    expect(text).not.toContain("wiretap-fixture-secret");
  });

  it("filters: an exchange is kept when it or one of its messages matches", () => {
    const filtered = buildHar(records, { creator: CREATOR, filter: compileFilters({ tool: ["get-sum"] }) });
    expect(filtered.log.entries).toHaveLength(1);
    expect(filtered.log.entries[0]!._mcp.messages.map((m) => m.tool)).toEqual(["get-sum", "get-sum"]);
    const legacyId = new URLSearchParams((records.find((r) => r.transport === "http+sse")!.session as string).split("?")[1]).get("sessionId")!;
    const legacy = buildHar(records, { creator: CREATOR, filter: compileFilters({ session: [legacyId.slice(0, 8)] }) });
    expect(legacy.log.entries.map((e) => `${e.request.method} ${new URL(e.request.url).pathname}`)).toEqual(["GET /sse", "POST /message", "POST /message", "POST /message", "POST /message"]);
  });
});

describe("mcp-wiretap export (CLI)", () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-har-test-"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("writes the HAR file, and to stdout with --har -", async () => {
    const out = path.join(dir, "session.har");
    const fixture = path.join(FIXTURES, "session.ndjson");
    const r = await runCli(["export", "--har", out, fixture]);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/wrote \d+ entries to .*session\.har/);
    const written = JSON.parse(await readFile(out, "utf8")) as Har;
    expect(validateHar(written)).toEqual([]);
    expect(written.log.creator.name).toBe("mcp-wiretap");
    expect(written.log.entries).toHaveLength(load("session.ndjson").filter((x) => x.event === "http").length);
    const stdout = await runCli(["export", "--har", "-", "--decision", "deny", fixture]);
    expect(stdout.code).toBe(0);
    const filtered = JSON.parse(stdout.stdout) as Har;
    expect(filtered.log.entries).toHaveLength(1);
    expect(validateHar(filtered)).toEqual([]);
  });

  it("writes bidi and other format controls from record strings escaped, as the log does (--har and --otlp)", async () => {
    // The log holds them escaped (`\u202e`); parsed, a record string carries the raw character.
    const hostile = readFileSync(path.join(FIXTURES, "session.ndjson"), "utf8").replaceAll('"echo"', '"echo\\u202e\\u2066txt.exe"').replaceAll('"path":"/mcp"', '"path":"/mcp\\u200b"');
    const log = path.join(dir, "bidi.ndjson");
    await writeFile(log, hostile);
    const har = await runCli(["export", "--har", "-", log]);
    expect(har.code).toBe(0);
    expect(har.stdout).not.toMatch(/[\u202e\u2066\u200b]/u);
    expect(har.stdout).toContain("echo\\u202e\\u2066txt.exe");
    const parsed = JSON.parse(har.stdout) as Har;
    expect(JSON.stringify(parsed)).toContain("echo\u202e\u2066txt.exe");
    expect(parsed.log.entries.some((e) => e.request.url.endsWith("/mcp\u200b"))).toBe(true);
    const otlp = await runCli(["export", "--otlp", "-", log]);
    expect(otlp.code).toBe(0);
    expect(otlp.stdout).toContain("echo\\u202e");
    expect(otlp.stdout).not.toMatch(/[\u202e\u2066\u200b]/u);
  });

  it("needs --har, and fails cleanly on a missing file", async () => {
    const noOut = await runCli(["export", path.join(FIXTURES, "session.ndjson")]);
    expect(noOut.code).toBe(2);
    expect(noOut.stderr).toMatch(/--har/);
    const missing = await runCli(["export", "--har", path.join(dir, "x.har"), path.join(dir, "missing.ndjson")]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/cannot read/);
  });

  it.runIf(process.platform !== "win32")("never writes through or replaces a link at --har, and never leaves the export readable by others", async () => {
    const victim = path.join(dir, "victim.txt");
    await writeFile(victim, "precious\n", { mode: 0o644 });
    const out = path.join(dir, "linked.har");
    await symlink(victim, out);
    const refused = await runCli(["export", "--har", out, path.join(FIXTURES, "session.ndjson")]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/--har .*linked\.har is a symbolic link/);
    expect((await lstat(out)).isSymbolicLink()).toBe(true);
    expect(await readFile(victim, "utf8")).toBe("precious\n");
    const loose = path.join(dir, "loose.har");
    await writeFile(loose, "old export\n", { mode: 0o644 });
    await chmod(loose, 0o644);
    expect((await runCli(["export", "--har", loose, path.join(FIXTURES, "session.ndjson")])).code).toBe(0);
    const info = await lstat(loose);
    expect(info.isFile()).toBe(true);
    expect(info.mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(loose, "utf8"))).toHaveProperty("log");
  });
});
