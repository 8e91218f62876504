import { num, obj, str, type LogRecord } from "../../saved-logs/filters.js";

/** One JSON-RPC message (an `rpc` record) as the page shows it. */
export interface Msg {
  /** Position among all records received. */
  index: number;
  record: LogRecord;
  /** The record as logged, for free-text search. */
  line: string;
  /** The request exchange it belongs to (a request's own, its answer's and asides'). */
  group: Group | null;
}

/** `cancelled`: the requester cancelled it before an answer (it stays so if one comes anyway), as `check` counts it. */
export type GroupStatus = "ok" | "error" | "pending" | "denied" | "unanswered" | "cancelled";

/**
 * A request with its progress and cancellation notifications and its answer. A call made as a task keeps
 * its task's messages (polls, status notifications, input turns) as asides, in order: its timeline; its
 * answer is the final result (until then, the answer that created the task).
 */
export interface Group {
  request: Msg;
  asides: Msg[];
  answer: Msg | null;
  status: GroupStatus;
  /** A call made as a task: the task id, and the call's latency once the task ended. */
  task?: { id: string; latencyMs: number | null };
}

export interface SessionInfo {
  key: string;
  server: string;
  session: string | null;
  transport: string | null;
  protocolVersion: string | null;
  client: string | null;
  serverName: string | null;
  start: string | null;
  end: string | null;
  messages: number;
  errors: number;
  denials: number;
  flags: number;
}

export interface ToolStat {
  key: string;
  server: string;
  tool: string;
  calls: number;
  errors: number;
  denials: number;
  /** Messages of its calls the policy flagged. */
  flags: number;
  latencies: number[];
  /** When each call was sent (ms since the epoch), in arrival order. */
  times: number[];
  bytesIn: number;
  bytesOut: number;
}

export interface ToolDrift {
  tool: string;
  time: string | null;
  /** The definition listed before, when this log holds it. */
  before: unknown;
  after: unknown;
  /** The policy's pin check said so (`tool_changed`). */
  pinFinding: string | null;
}

export interface Catalog {
  server: string;
  listedAt: string | null;
  tools: Map<string, unknown>;
  /** The last listing was truncated in the log (--payloads): names only from what is held. */
  truncated: boolean;
  drift: ToolDrift[];
}

const isDenied = (r: LogRecord): boolean => str(obj(r.decision)?.action) === "deny";
const isFlagged = (r: LogRecord): boolean => str(obj(r.decision)?.action) === "flag";

/** Everything the page derives from the records, updated one record at a time. */
export class Store {
  records = 0;
  /** Records the server's history let go before this page read them. */
  skipped = 0;
  notRecords = 0;
  msgs: Msg[] = [];
  http = new Map<string, LogRecord>();
  sessions = new Map<string, SessionInfo>();
  tools = new Map<string, ToolStat>();
  catalogs = new Map<string, Catalog>();
  private open = new Map<string, Group[]>();
  /** Calls made as tasks, by their `call`. */
  private taskCalls = new Map<string, Group>();
  private groupsByFlowId = new Map<string, Group>();

  addLine(line: string): void {
    let r: unknown;
    try {
      r = JSON.parse(line);
    } catch {
      this.notRecords++;
      return;
    }
    if (r === null || typeof r !== "object" || Array.isArray(r)) {
      this.notRecords++;
      return;
    }
    this.add(r as LogRecord, line);
  }

  add(r: LogRecord, line: string): void {
    const index = this.records++;
    if (r.event === "http") {
      const flow = str(r.flow);
      // An exchange may log several http records (retries): the last one wins.
      if (flow) this.http.set(flow, r);
      return;
    }
    if (r.event === "session") return this.onSession(r);
    if (r.event !== "rpc") return;
    const msg: Msg = { index, record: r, line, group: null };
    this.msgs.push(msg);
    this.pair(msg);
    this.count(msg);
    this.catalog(msg);
  }

  private sessionOf(server: string, session: string | null): SessionInfo {
    const key = `${server}|${session ?? ""}`;
    let s = this.sessions.get(key);
    if (!s) {
      s = { key, server, session, transport: null, protocolVersion: null, client: null, serverName: null, start: null, end: null, messages: 0, errors: 0, denials: 0, flags: 0 };
      this.sessions.set(key, s);
    }
    return s;
  }

  private onSession(r: LogRecord): void {
    const server = str(r.server);
    if (!server) return;
    const s = this.sessionOf(server, str(r.session));
    s.transport = str(r.transport) ?? s.transport;
    s.protocolVersion = str(r.protocolVersion) ?? s.protocolVersion;
    const client = obj(r.clientInfo);
    const srv = obj(r.serverInfo);
    if (client) s.client = `${str(client.name) ?? "?"} ${str(client.version) ?? ""}`.trim();
    if (srv) s.serverName = `${str(srv.name) ?? "?"} ${str(srv.version) ?? ""}`.trim();
    if (r.phase === "start") s.start = str(r.time);
    if (r.phase === "end") s.end = str(r.time);
  }

  private pair(msg: Msg): void {
    const r = msg.record;
    const kind = str(r.kind);
    const server = str(r.server) ?? "";
    const task = obj(r.task);
    const ofTask = task && task.created !== true ? this.taskCalls.get(str(r.call) ?? "") : undefined;
    if (ofTask) return this.onTask(ofTask, msg, task!);
    if (kind === "request" && r.id !== undefined && r.id !== null) {
      const group: Group = { request: msg, asides: [], answer: null, status: isDenied(r) && obj(r.decision)?.enforced === true ? "denied" : "pending" };
      msg.group = group;
      const key = `${server}|${JSON.stringify(r.id)}`;
      const list = this.open.get(key);
      if (list) list.push(group);
      else this.open.set(key, [group]);
      return;
    }
    const answers = kind === "response" || kind === "error" || kind === "unanswered";
    const method = str(r.method);
    const aside = method === "notifications/progress" || method === "notifications/cancelled";
    const related = obj(r.related);
    const id = answers ? r.id : aside && related ? related.id : undefined;
    if (id === undefined || id === null) return;
    const key = `${server}|${JSON.stringify(id)}`;
    const list = this.open.get(key);
    if (!list) return;
    const session = str(r.session);
    let at = -1;
    for (let i = list.length - 1; i >= 0; i--) {
      const q = (list[i] as Group).request.record;
      if (q.flow === r.flow || (session !== null && q.session === session)) {
        at = i;
        break;
      }
    }
    if (at < 0) return;
    const group = list[at] as Group;
    msg.group = group;
    if (!answers) {
      group.asides.push(msg);
      if (method === "notifications/cancelled" && group.status === "pending") group.status = "cancelled";
      return;
    }
    group.answer = msg;
    list.splice(at, 1);
    // An initialize request goes out before the server names the session: count it in the session its answer names.
    if (group.request.record.session == null && session !== null) this.moveToSession(server, session);
    if (list.length === 0) this.open.delete(key);
    if (task?.created === true && str(r.call) !== null) {
      group.task = { id: str(task.id) ?? "", latencyMs: null };
      this.taskCalls.set(str(r.call)!, group);
      if (group.status === "pending" && !isDenied(r)) return this.onTask(group, msg, task, true);
    }
    if (group.status !== "denied" && group.status !== "cancelled") {
      const result = obj(r.result);
      group.status = kind === "unanswered" ? "unanswered" : kind === "error" || result?.isError === true ? "error" : isDenied(r) ? "denied" : "ok";
    }
  }

  /** A message of a call made as a task: on its timeline; the final result becomes the answer. */
  private onTask(group: Group, msg: Msg, task: LogRecord, creation = false): void {
    const r = msg.record;
    msg.group = group;
    const end = obj(task.end);
    if (end && group.task) group.task.latencyMs = num(end.callLatencyMs);
    const kind = str(r.kind);
    if (task.final === true || kind === "unanswered") {
      if (group.answer && group.answer !== msg) group.asides.push(group.answer);
      group.answer = msg;
    } else if (!creation) group.asides.push(msg);
    if (group.status === "denied") return;
    if (isDenied(r)) group.status = "denied";
    else if (task.final === true) group.status = kind === "error" || obj(r.result)?.isError === true ? "error" : "ok";
    else if (kind === "unanswered") group.status = "unanswered";
    else if (end) group.status = str(end.status) === "failed" ? "error" : str(end.status) === "cancelled" ? "unanswered" : group.status;
    else group.status = "pending";
  }

  private moveToSession(server: string, session: string): void {
    const none = this.sessions.get(`${server}|`);
    if (!none) return;
    none.messages--;
    if (none.messages <= 0) this.sessions.delete(none.key);
    this.sessionOf(server, session).messages++;
  }

  private count(msg: Msg): void {
    const r = msg.record;
    const server = str(r.server) ?? "?";
    const s = this.sessionOf(server, str(r.session));
    s.messages++;
    s.transport ??= str(r.transport);
    s.protocolVersion ??= str(r.protocolVersion);
    const kind = str(r.kind);
    if (kind === "error" || kind === "invalid") s.errors++;
    if (isDenied(r)) s.denials++;
    const taskEnd = obj(obj(r.task)?.end);
    if (taskEnd && str(r.tool) !== null) this.tools.get(`${server} ${str(r.tool)}`)?.latencies.push(num(taskEnd.callLatencyMs) ?? 0);
    if (isFlagged(r)) s.flags++;
    if (str(r.method) !== "tools/call") return;
    const tool = str(r.tool) ?? str(obj(r.related)?.tool);
    if (tool === null) return;
    const key = `${server} ${tool}`;
    let t = this.tools.get(key);
    if (!t) {
      t = { key, server, tool, calls: 0, errors: 0, denials: 0, flags: 0, latencies: [], times: [], bytesIn: 0, bytesOut: 0 };
      this.tools.set(key, t);
    }
    const bytes = num(r.bytes) ?? 0;
    if ((kind === "request" || kind === "response") && isFlagged(r)) t.flags++;
    if (kind === "request") {
      t.calls++;
      t.times.push(Date.parse(str(r.time) ?? ""));
      t.bytesIn += bytes;
      if (isDenied(r)) t.denials++;
    } else if (kind === "response" || kind === "error") {
      t.bytesOut += bytes;
      // A call made as a task: its latency is that to the task's end, counted below.
      const latency = obj(r.task) ? null : num(r.latencyMs);
      if (latency !== null) t.latencies.push(latency);
      if (kind === "error" || obj(r.result)?.isError === true) t.errors++;
      else if (isDenied(r)) t.denials++;
    }
  }

  private catalog(msg: Msg): void {
    const r = msg.record;
    if (str(r.method) !== "tools/list" || str(r.kind) !== "response") return;
    const server = str(r.server) ?? "?";
    let c = this.catalogs.get(server);
    if (!c) {
      c = { server, listedAt: null, tools: new Map(), truncated: false, drift: [] };
      this.catalogs.set(server, c);
    }
    c.listedAt = str(r.time);
    const findings = pinFindings(r);
    const result = obj(r.result);
    const tools = Array.isArray(result?.tools) ? (result.tools as unknown[]) : null;
    c.truncated = tools === null;
    if (!tools) {
      for (const f of findings) c.drift.push({ tool: f.tool ?? "?", time: c.listedAt, before: undefined, after: undefined, pinFinding: f.detail });
      c.tools = new Map(namesInPreview(str(result?.preview)).map((name) => [name, undefined]));
      return;
    }
    const listed = new Map<string, unknown>();
    tools.forEach((t, i) => {
      const name = str(obj(t)?.name);
      if (name === null) return;
      listed.set(name, t);
      const before = c.tools.get(name);
      const finding = findings.find((f) => f.index === i) ?? null;
      const changed = before !== undefined && JSON.stringify(before) !== JSON.stringify(t);
      if (changed || finding) c.drift.push({ tool: name, time: c.listedAt, before, after: t, pinFinding: finding?.detail ?? null });
    });
    c.tools = listed;
  }
}

/**
 * Tool names from the preview of a truncated `tools/list` result (`{"tools":[{"name":"a",…},{"name":"b",…`):
 * the tools whose definition starts within the preview. A name inside a schema does not follow `[{` or `},{`
 * at the top level of the array often, but may: these are shown as names only, marked as from a preview.
 */
export function namesInPreview(preview: string | null): string[] {
  if (!preview) return [];
  const names: string[] = [];
  const re = /(?:"tools":\[|\},)\{"name":"((?:[^"\\]|\\.)*)"/g;
  for (const m of preview.matchAll(re)) {
    try {
      names.push(JSON.parse(`"${m[1] as string}"`) as string);
    } catch {
      // a name cut by the truncation
    }
  }
  return [...new Set(names)];
}

/** `tool_changed` / `tool_added` findings of the pin check, by index in the listed tools. */
function pinFindings(r: LogRecord): { index: number; tool: string | null; detail: string }[] {
  const rules = obj(r.decision)?.rules;
  if (!Array.isArray(rules)) return [];
  const out: { index: number; tool: string | null; detail: string }[] = [];
  for (const rule of rules) {
    const findings = obj(rule)?.findings;
    if (!Array.isArray(findings)) continue;
    for (const f of findings) {
      const type = str(obj(f)?.type);
      if (type !== "tool_changed" && type !== "tool_added") continue;
      const path = str(obj(f)?.path) ?? "";
      const m = /^\/result\/tools\/(\d+)/.exec(path);
      const detail = str(obj(f)?.detail) ?? type;
      out.push({ index: m ? Number(m[1]) : -1, tool: /tool "(.*?)"/.exec(detail)?.[1] ?? null, detail });
    }
  }
  return out;
}

/** The q-th quantile (0..1) of unsorted values, nearest rank; null when there are none. */
export function quantile(values: readonly number[], q: number): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number;
}
