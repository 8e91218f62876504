import { printable, type Paint, type Style } from "../../saved-logs/color.js";
import { errorText, header, isHttps, num, obj, str, type LogRecord } from "../../saved-logs/filters.js";
import { bytes, clip, duration, KIND_WIDTH, noticeRow, pad, row, shortSession } from "../../saved-logs/layout.js";
import { decisionBadge } from "./rpc-line.js";

/** A failed exchange: no status, status ≥ 400, or an error other than the client closing (how SSE streams end). */
export function exchangeFailed(r: LogRecord): boolean {
  const status = num(r.status);
  const error = obj(r.error);
  return status === null || status >= 400 || (error !== undefined && error.code !== "client_aborted");
}

export function httpLine(p: Paint, r: LogRecord): string {
  const status = num(r.status);
  const error = obj(r.error);
  const statusText = status === null ? "---" : String(status);
  const statusCell = status === null || status >= 500 ? p(["red", "bold"], statusText) : status >= 400 ? p(["yellow", "bold"], statusText) : statusText;
  const parts = [printable(`${str(r.method) ?? "?"} ${urlOf(r)}`)];
  if (str(r.statusSource) === "proxy") parts.push(p("dim", "(answered by the proxy)"));
  if (error) parts.push(errorMark(p, error));
  const session = shortSession(header(r.requestHeaders, "mcp-session-id") ?? null);
  const kindCell = p(exchangeFailed(r) ? "red" : "gray", pad("http", KIND_WIDTH));
  return row(p, str(r.time), session, p("gray", "⇄"), kindCell, statusCell, duration(num(r.durationMs)), bytes(num(r.responseBytes)), parts.join("  "));
}

export function sessionLine(p: Paint, r: LogRecord): string {
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
  return noticeRow(p, str(r.time), short, p("cyan", printable(text)));
}

/** Proxy events: start and stop, refusals, policy blocks, tunnels, WebSockets, auth; anything else as key=value. */
export function eventLine(p: Paint, r: LogRecord): string {
  const event = str(r.event);
  const level = str(r.level);
  const loud = level === "warn" ? "yellow" : level === "error" || level === "fatal" ? "red" : null;
  const time = str(r.time);
  const line = (text: string, style: Style | null = loud) => noticeRow(p, time, "-", style ? p(style, printable(text)) : printable(text));
  switch (event) {
    case "start": {
      const policy = obj(r.policy);
      const mode = str(policy?.mode);
      if (r.transport === "stdio") return line(`── ${str(r.server) ?? "stdio"} started (pid ${num(r.pid) ?? "?"})${mode ? `, policy: ${mode}` : ""}`, "cyan");
      return line(`── proxy ${str(r.version) ?? ""} started on ${str(r.listen) ?? "?"}${mode ? `, policy: ${mode}` : ""}${r.insecureUpstream === true ? ", UPSTREAM CERTIFICATES NOT VERIFIED" : ""}`, "cyan");
    }
    case "stop":
      if (str(r.server)?.startsWith("stdio:")) return line(`── ${str(r.server)} stopped${str(r.reason) ? ` (${str(r.reason)})` : ""}`, "cyan");
      return line(`── proxy stopped${str(r.reason) ? ` (${str(r.reason)})` : ""}`, "cyan");
    case "refused": {
      const what = str(r.target) ?? [str(r.method), str(r.host) ?? str(r.requestLine)].filter(Boolean).join(" ");
      return row(p, time, "-", p("red", "✗"), p(["red", "bold"], pad("REFUSED", KIND_WIDTH)), String(num(r.status) ?? ""), "", "", p("red", printable(`${str(r.stage) ?? ""} ${what}  — ${str(r.reason) ?? ""}`.trim())));
    }
    case "policy": {
      const badge = decisionBadge(p, obj(r.decision));
      const rules = obj(r.decision)?.rules;
      const reason = Array.isArray(rules) ? str(obj(rules[0])?.reason) : null;
      return row(p, time, "-", p("red", "✗"), p("red", pad("policy", KIND_WIDTH)), "", "", "", [printable(`${str(r.stage) ?? ""} ${str(r.server) ?? ""}`.trim()), badge, reason ? p("dim", printable(`— ${reason}`)) : ""].filter(Boolean).join("  "));
    }
    case "tunnel":
      return row(
        p,
        time,
        "-",
        p("gray", "⇄"),
        p(r.error ? "red" : "gray", pad("tunnel", KIND_WIDTH)),
        "",
        duration(num(r.durationMs)),
        bytes(totalBytes(r)),
        printable(`${str(r.mode) ?? ""} ${str(r.server) ?? ""} ↑${bytes(num(r.bytesUp))} ↓${bytes(num(r.bytesDown))}`.trim()) + errorSuffix(p, r.error),
      );
    case "websocket":
      return row(p, time, "-", p("gray", "⇄"), p("gray", pad("websocket", KIND_WIDTH)), String(num(r.status) ?? ""), duration(num(r.durationMs)), bytes(totalBytes(r)), printable(`${str(r.server) ?? ""}${str(r.path) ?? ""}`) + errorSuffix(p, r.error));
    case "auth":
      return row(p, time, "-", p("gray", "⇄"), p(loud ?? "gray", pad("auth", KIND_WIDTH)), String(num(r.status) ?? ""), "", "", printable(`${str(r.step) ?? ""}  ${str(r.method) ?? ""} ${str(r.server) ?? ""}${str(r.path) ?? ""}`));
    default: {
      const fields = Object.entries(r)
        .filter(([k, v]) => k !== "level" && k !== "time" && k !== "event" && (typeof v === "string" || typeof v === "number" || typeof v === "boolean"))
        .map(([k, v]) => `${k}=${clip(String(v), 120)}`);
      return line(`• ${event ?? "(no event)"}${fields.length > 0 ? ` ${fields.join(" ")}` : ""}`);
    }
  }
}

function urlOf(r: LogRecord): string {
  return `${isHttps(r) ? "https" : "http"}://${str(r.server) ?? "?"}${str(r.path) ?? ""}`;
}

function peerName(info: unknown): string {
  const o = obj(info);
  if (!o) return "?";
  return printable([str(o.name) ?? "?", str(o.version)].filter(Boolean).join(" "));
}

function totalBytes(r: LogRecord): number {
  return (num(r.bytesUp) ?? 0) + (num(r.bytesDown) ?? 0);
}

function errorMark(p: Paint, error: LogRecord): string {
  return p("red", printable(`✗ ${errorText(error)}`));
}

function errorSuffix(p: Paint, error: unknown): string {
  const e = obj(error);
  return e ? `  ${errorMark(p, e)}` : "";
}
