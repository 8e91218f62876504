import { painter, printable, type Paint } from "./color.js";
import { header, legacySessionId, num, obj, str, type LogRecord } from "./filters.js";

export interface FormatterOptions {
  color: boolean;
  /** Show every `http` record, not only those of failed or non-MCP exchanges. */
  allHttp?: boolean;
}

/**
 * The human view of a log: one line per record worth seeing, in fixed columns
 *
 *   TIME (UTC)   SESSION  DIR KIND       ID         LATENCY  SIZE  TEXT  [DECISION]
 *   07:35:38.587 e596b16f → request      #3                100B  tools/call get-sum  FLAG audit-arithmetic
 *   07:35:38.597 e596b16f ← └ response   #3           15ms    97B  tools/call get-sum  FLAG audit-arithmetic
 *
 * A response (progress, error, unanswered mark) that directly follows its request is drawn as a branch
 * (`├`, `└`) under it. `http` records are shown only for exchanges that failed (status ≥ 400, or an error)
 * or carried no MCP, unless `allHttp`. Stateful: feed it every record in order (`observe`), then `format`
 * those that passed the filters.
 */
export class TailFormatter {
  private readonly paint: Paint;
  /** Flows known to carry MCP (an rpc record named them), bounded. */
  private readonly mcpFlows = new Set<string>();
  /** The request whose answers are drawn as branches, while nothing else is printed in between. */
  private open: LogRecord | null = null;

  constructor(private readonly opts: FormatterOptions) {
    this.paint = painter(opts.color);
  }

  /** Learns from every record, shown or not (which flows are MCP). */
  observe(record: LogRecord): void {
    if (record.event === "rpc" && typeof record.flow === "string") {
      this.mcpFlows.add(record.flow);
      if (this.mcpFlows.size > 100_000) this.mcpFlows.delete(this.mcpFlows.values().next().value as string);
    }
  }

  /** The line for a record, or null when the view leaves it out. */
  format(record: LogRecord): string | null {
    switch (record.event) {
      case "rpc":
        return this.rpc(record);
      case "http":
        return this.http(record);
      case "session":
        return this.session(record);
      default:
        this.open = null;
        return this.other(record);
    }
  }

  /** A line that is not a JSON record: as it is, dimmed. */
  formatRaw(line: string): string {
    this.open = null;
    return this.paint("dim", printable(line));
  }

  // ---------------------------------------------------------------------------------------------------- rpc

  private rpc(r: LogRecord): string {
    const p = this.paint;
    const kind = str(r.kind) ?? "?";
    const toServer = r.direction === "client_to_server";
    const arrow = toServer ? p("green", "→") : p("blue", "←");
    const method = str(r.method);
    const rel = obj(r.related);
    const progress = method === "notifications/progress";
    const cancel = method === "notifications/cancelled";

    // Branch drawing: is this an answer (or progress) of the request printed just before?
    let branch = "";
    const answers = kind === "response" || kind === "error" || kind === "unanswered";
    if (this.open && ((answers && sameRequest(this.open, r, r.id)) || ((progress || cancel) && rel && sameRequest(this.open, r, rel.id)))) {
      branch = answers ? "└ " : "├ ";
      if (answers) this.open = null;
    } else {
      this.open = kind === "request" ? r : null;
    }

    let label: string;
    let styled: (s: string) => string;
    switch (kind) {
      case "request":
        label = "request";
        styled = (s) => p("bold", s);
        break;
      case "response":
        label = "response";
        styled = (s) => s;
        break;
      case "notification":
        label = progress ? "progress" : cancel ? "cancel" : "notify";
        styled = (s) => (progress ? p("dim", s) : cancel ? p("yellow", s) : s);
        break;
      case "error":
        label = "error";
        styled = (s) => p("red", s);
        break;
      case "invalid":
        label = "INVALID";
        styled = (s) => p(["magenta", "bold"], s);
        break;
      case "unanswered":
        label = "UNANSWERED";
        styled = (s) => p(["red", "bold"], s);
        break;
      default:
        label = kind;
        styled = (s) => s;
    }
    const kindCell = p("gray", branch) + styled(pad(label, 12 - branch.length));

    const idValue = progress || cancel ? rel?.id : r.id;
    const id = idValue === undefined || (idValue === null && kind !== "error" && kind !== "invalid") ? "" : `#${idText(idValue)}`;
    const latencyMs = num(r.latencyMs) ?? (progress || cancel ? num(rel?.elapsedMs) : null);
    const latency = latencyMs === null ? "" : duration(latencyMs);
    const size = kind === "unanswered" ? "" : bytes(num(r.bytes));

    const parts: string[] = [];
    const call = [method, str(r.tool)].filter((x): x is string => x !== null).join(" ");
    const params = obj(r.params);
    if (progress) {
      const done = num(params?.progress);
      const total = num(params?.total);
      parts.push(p("cyan", `⋯ ${done ?? "?"}${total !== null ? `/${total}` : ""}`));
      if (rel) parts.push(printable([str(rel.method), str(rel.tool)].filter(Boolean).join(" ")));
      const message = str(params?.message);
      if (message) parts.push(p("dim", printable(clip(message, 80))));
    } else if (cancel) {
      parts.push(printable(call));
      if (rel) parts.push(p("dim", printable(`of ${[str(rel.method), str(rel.tool)].filter(Boolean).join(" ")}`)));
      const reason = str(params?.reason);
      if (reason) parts.push(p("dim", printable(`“${clip(reason, 80)}”`)));
    } else {
      if (call) parts.push(kind === "request" ? p("bold", printable(call)) : printable(call));
    }
    if (kind === "error") {
      const error = obj(r.error);
      const code = num(error?.code);
      const message = str(error?.message);
      if (code !== null || message) parts.push(p("red", printable([code, message && clip(message, 120)].filter((x) => x !== null && x !== "").join(" "))));
    }
    if (kind === "invalid" || kind === "unanswered") {
      const reason = str(r.reason);
      if (reason) parts.push(p(kind === "invalid" ? "magenta" : "red", printable(`— ${clip(reason, 160)}`)));
    } else if (str(r.reason)) {
      parts.push(p("yellow", printable(`— ${clip(str(r.reason)!, 160)}`)));
    }
    const batch = obj(r.batch);
    if (batch) parts.push(p("dim", `[batch ${(num(batch.index) ?? 0) + 1}/${num(batch.size) ?? "?"}]`));
    if (Array.isArray(r.headerMismatch)) parts.push(p("yellow", "⚠ header mismatch"));
    if (r.insecureUpstream === true) parts.push(p("yellow", "⚠ insecure upstream"));
    const badge = this.badge(obj(r.decision));
    if (badge) parts.push(badge);

    const sessionCell = shortSession(str(r.session));
    return this.row(str(r.time), sessionCell, arrow, kindCell, id, latency, size, parts.join("  "));
  }

  private badge(decision: LogRecord | undefined): string {
    if (!decision) return "";
    const action = str(decision.action);
    if (action !== "flag" && action !== "deny") return "";
    const p = this.paint;
    const rules = Array.isArray(decision.rules) ? decision.rules.map((x) => str(obj(x)?.name)).filter((x): x is string => x !== null) : [];
    const names = rules.length > 0 ? ` ${printable(clip(rules.join(","), 80))}` : "";
    if (action === "flag") return p(["yellow", "bold"], `FLAG${names}`);
    const enforced = decision.enforced === true;
    const effect = str(decision.effect);
    const text = `${enforced ? "DENY*" : "DENY"}${names}`;
    return (enforced ? p(["inverseRed", "bold"], text) : p(["red", "bold"], text)) + (effect ? p("red", printable(` (${clip(effect, 80)})`)) : "");
  }

  // ---------------------------------------------------------------------------------------------------- http

  private http(r: LogRecord): string | null {
    const status = num(r.status);
    const error = obj(r.error);
    // A client closing a stream is how SSE streams end (and an abandoned request gets its own UNANSWERED line).
    const failed = status === null || status >= 400 || (error !== undefined && error.code !== "client_aborted");
    const flow = str(r.flow);
    const mcp =
      (flow !== null && this.mcpFlows.has(flow)) ||
      header(r.requestHeaders, "mcp-session-id") !== undefined ||
      header(r.requestHeaders, "mcp-protocol-version") !== undefined;
    if (!this.opts.allHttp && mcp && !failed) return null;
    this.open = null;
    const p = this.paint;
    const statusText = status === null ? "---" : String(status);
    const statusCell = status === null || status >= 500 ? p(["red", "bold"], statusText) : status >= 400 ? p(["yellow", "bold"], statusText) : statusText;
    const parts = [printable(`${str(r.method) ?? "?"} ${urlOf(r)}`)];
    if (str(r.statusSource) === "proxy") parts.push(p("dim", "(answered by the proxy)"));
    if (error) parts.push(p("red", printable(`✗ ${[str(error.code), str(error.message)].filter(Boolean).join(": ")}`)));
    const session = shortSession(header(r.requestHeaders, "mcp-session-id") ?? null);
    return this.row(str(r.time), session, p("gray", "⇄"), p(failed ? "red" : "gray", pad("http", 12)), statusCell, duration(num(r.durationMs)), bytes(num(r.responseBytes)), parts.join("  "));
  }

  // ---------------------------------------------------------------------------------------------------- session

  private session(r: LogRecord): string {
    const p = this.paint;
    const short = shortSession(str(r.session));
    let text: string;
    if (r.phase === "start") {
      const client = peerName(r.clientInfo);
      const server = peerName(r.serverInfo);
      const version = str(r.protocolVersion);
      const details = [str(r.transport), str(r.server)].filter(Boolean).join(", ");
      text = `── session ${short} started: client ${client} ↔ server ${server}${version ? `, protocol ${version}` : ""}${details ? ` (${details})` : ""}`;
    } else {
      const reason = str(r.reason);
      const durationMs = num(r.durationMs);
      const messages = num(r.messages);
      const tail = [durationMs !== null ? `after ${duration(durationMs)}` : null, messages !== null ? `${messages} message${messages === 1 ? "" : "s"}` : null].filter(Boolean).join(", ");
      text = `── session ${short} ended${reason ? ` (${reason})` : ""}${tail ? ` ${tail}` : ""}`;
    }
    return `${this.time(str(r.time))} ${pad(short, 8)} ${p("cyan", printable(text))}`;
  }

  // ---------------------------------------------------------------------------------------------------- the rest

  private other(r: LogRecord): string {
    const p = this.paint;
    const event = str(r.event);
    const level = str(r.level);
    const loud = level === "warn" ? "yellow" : level === "error" || level === "fatal" ? "red" : null;
    const line = (text: string, style: Parameters<Paint>[0] | null = loud) =>
      `${this.time(str(r.time))} ${pad("-", 8)} ${style ? p(style, printable(text)) : printable(text)}`;
    switch (event) {
      case "start": {
        const policy = obj(r.policy);
        const mode = str(policy?.mode);
        return line(`── proxy ${str(r.version) ?? ""} started on ${str(r.listen) ?? "?"}${mode ? `, policy: ${mode}` : ""}${r.insecureUpstream === true ? ", UPSTREAM CERTIFICATES NOT VERIFIED" : ""}`, "cyan");
      }
      case "stop":
        return line(`── proxy stopped${str(r.reason) ? ` (${str(r.reason)})` : ""}`, "cyan");
      case "refused": {
        const what = str(r.target) ?? [str(r.method), str(r.host) ?? str(r.requestLine)].filter(Boolean).join(" ");
        return this.row(str(r.time), "-", p("red", "✗"), p(["red", "bold"], pad("REFUSED", 12)), String(num(r.status) ?? ""), "", "", p("red", printable(`${str(r.stage) ?? ""} ${what}  — ${str(r.reason) ?? ""}`.trim())));
      }
      case "policy": {
        const badge = this.badge(obj(r.decision));
        const rules = obj(r.decision)?.rules;
        const reason = Array.isArray(rules) ? str(obj(rules[0])?.reason) : null;
        return this.row(str(r.time), "-", p("red", "✗"), p("red", pad("policy", 12)), "", "", "", [printable(`${str(r.stage) ?? ""} ${str(r.server) ?? ""}`.trim()), badge, reason ? p("dim", printable(`— ${reason}`)) : ""].filter(Boolean).join("  "));
      }
      case "tunnel":
        return this.row(
          str(r.time),
          "-",
          p("gray", "⇄"),
          p(r.error ? "red" : "gray", pad("tunnel", 12)),
          "",
          duration(num(r.durationMs)),
          bytes((num(r.bytesUp) ?? 0) + (num(r.bytesDown) ?? 0)),
          printable(`${str(r.mode) ?? ""} ${str(r.server) ?? ""} ↑${bytes(num(r.bytesUp))} ↓${bytes(num(r.bytesDown))}`.trim()) + errorSuffix(p, r.error),
        );
      case "websocket":
        return this.row(str(r.time), "-", p("gray", "⇄"), p("gray", pad("websocket", 12)), String(num(r.status) ?? ""), duration(num(r.durationMs)), bytes((num(r.bytesUp) ?? 0) + (num(r.bytesDown) ?? 0)), printable(`${str(r.server) ?? ""}${str(r.path) ?? ""}`) + errorSuffix(p, r.error));
      case "auth":
        return this.row(
          str(r.time),
          "-",
          p("gray", "⇄"),
          p(loud ?? "gray", pad("auth", 12)),
          String(num(r.status) ?? ""),
          "",
          "",
          printable(`${str(r.step) ?? ""}  ${str(r.method) ?? ""} ${str(r.server) ?? ""}${str(r.path) ?? ""}`),
        );
      default: {
        const fields = Object.entries(r)
          .filter(([k, v]) => k !== "level" && k !== "time" && k !== "event" && (typeof v === "string" || typeof v === "number" || typeof v === "boolean"))
          .map(([k, v]) => `${k}=${clip(String(v), 120)}`);
        return line(`• ${event ?? "(no event)"}${fields.length > 0 ? ` ${fields.join(" ")}` : ""}`);
      }
    }
  }

  // ---------------------------------------------------------------------------------------------------- layout

  private row(time: string | null, session: string, arrow: string, kindCell: string, id: string, latency: string, size: string, text: string): string {
    const left = `${this.time(time)} ${pad(session, 8)} ${arrow} ${kindCell} ${pad(id, 10)} ${latency.padStart(6)} ${size.padStart(6)}`;
    return text ? `${left}  ${text}` : left.trimEnd();
  }

  private time(iso: string | null): string {
    return this.paint("gray", clockTime(iso));
  }
}

/** HH:MM:SS.mmm in UTC from an ISO time (pino's `time`); anything else as it is, padded. */
export function clockTime(iso: string | null): string {
  if (iso === null) return pad("-", 12);
  const m = /^\d{4}-\d\d-\d\dT(\d\d:\d\d:\d\d)(\.\d{1,9})?Z$/.exec(iso);
  if (m) return `${m[1]}${((m[2] ?? ".") + "000").slice(0, 4)}`;
  const t = Date.parse(iso);
  if (!Number.isNaN(t)) return new Date(t).toISOString().slice(11, 23);
  return pad(printable(iso.slice(0, 12)), 12);
}

/** First 8 characters of a session id (of a legacy endpoint, of its sessionId value), or "-". */
export function shortSession(session: string | null): string {
  if (session === null || session === "") return "-";
  const legacy = legacySessionId(session);
  return printable((legacy ?? session.replace(/^\/+/, "")).slice(0, 8));
}

/** 812B, 1.2kB, 34kB, 5.6MB (SI: 1 kB = 1000 bytes). */
export function bytes(n: number | null): string {
  if (n === null) return "";
  if (n < 1000) return `${n}B`;
  const units = ["kB", "MB", "GB", "TB"];
  let value = n / 1000;
  let unit = 0;
  while (value >= 999.5 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${value < 9.95 ? value.toFixed(1) : Math.round(value)}${units[unit]}`;
}

/** 12ms, 1.3s, 42s, 3m05s. */
export function duration(ms: number | null): string {
  if (ms === null) return "";
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 9950) return `${(ms / 1000).toFixed(1)}s`;
  if (ms < 59_500) return `${Math.round(ms / 1000)}s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
}

function urlOf(r: LogRecord): string {
  const server = str(r.server) ?? "?";
  const tls = obj(r.tls);
  const secure = r.mode === "mitm" || (tls !== undefined && tls.server !== null && tls.server !== undefined);
  return `${secure ? "https" : "http"}://${server}${str(r.path) ?? ""}`;
}

function peerName(info: unknown): string {
  const o = obj(info);
  if (!o) return "?";
  return printable([str(o.name) ?? "?", str(o.version)].filter(Boolean).join(" "));
}

function errorSuffix(p: Paint, error: unknown): string {
  const e = obj(error);
  if (!e) return "";
  return "  " + p("red", printable(`✗ ${[str(e.code), str(e.message)].filter(Boolean).join(": ")}`));
}

/** Same request: equal ids, and the same exchange or the same (named) session. */
function sameRequest(request: LogRecord, other: LogRecord, id: unknown): boolean {
  if (JSON.stringify(request.id) !== JSON.stringify(id) || id === undefined) return false;
  if (request.server !== other.server) return false;
  if (request.flow === other.flow) return true;
  return typeof other.session === "string" && other.session === request.session;
}

function idText(id: unknown): string {
  const text = typeof id === "string" ? id : JSON.stringify(id) ?? "?";
  return printable(clip(text, 9));
}

function pad(text: string, width: number): string {
  return text.length >= width ? text : text + " ".repeat(width - text.length);
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
