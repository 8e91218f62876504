import { classifyMessage } from "../mcp/jsonrpc.js";
import type { RpcEvent } from "../mcp/rpc-event.js";
import { loadPolicyFile } from "../policy/load-config.js";
import { createPolicy } from "../policy/create-policy.js";
import { toolName } from "../mcp/jsonrpc.js";
import { UsageError } from "../util/usage-error.js";

/** `mcp-wiretap policy check FILE`: validates, prints a summary. */
export function policyCheckCommand(file: string): void {
  const config = loadPolicyFile(file);
  const policy = createPolicy(config, { pins: null });
  const lines = [
    `${file}: valid`,
    `  mode: ${config.mode}, default: ${config.default}`,
    ...config.rules.map((r) => `  rule ${r.name} (${r.action}): ${policy.describeRule(r)}`),
    `  detectors: ${Object.entries(config.detectors).map(([k, v]) => `${k}=${v}`).join(", ")}`,
    ...config.rateLimits.map((r) => `  rate limit ${r.name}: ${r.perMinute}/min per ${r.per} → ${r.action}`),
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
}

export interface ExplainOptions {
  message: string;
  server: string;
  direction?: "client_to_server" | "server_to_client";
  method?: string;
  json?: boolean;
}

export class ExplainInputError extends UsageError {}

/** `mcp-wiretap policy explain FILE --message JSON`: which rules and detectors fire, and why. */
export function policyExplainCommand(file: string, opts: ExplainOptions): void {
  const config = loadPolicyFile(file);
  let raw: unknown;
  try {
    raw = JSON.parse(opts.message);
  } catch (err) {
    throw new ExplainInputError(`--message is not JSON: ${(err as Error).message}`);
  }
  const msg = classifyMessage(raw);
  const isAnswer = msg.kind === "response" || msg.kind === "error";
  const event: RpcEvent = {
    flow: "explain",
    transport: "streamable-http",
    server: opts.server,
    path: "/mcp",
    session: null,
    protocolVersion: null,
    direction: opts.direction ?? (isAnswer ? "server_to_client" : "client_to_server"),
    kind: msg.kind,
    bytes: Buffer.byteLength(opts.message),
    raw,
    message: msg,
  };
  if (msg.kind === "request" || msg.kind === "notification") event.method = msg.method;
  else if (opts.method) event.method = opts.method;
  const tool = toolName(msg);
  if (tool !== undefined) event.tool = tool;
  const policy = createPolicy(config, { pins: null });
  const rules = policy.explainRules(event);
  const decision = policy.judge(event);
  if (opts.json) {
    process.stdout.write(`${JSON.stringify({ message: { kind: event.kind, method: event.method ?? null, tool: event.tool ?? null, direction: event.direction, server: event.server }, rules, decision }, null, 2)}\n`);
    return;
  }
  const out = [
    `message: ${event.kind} ${event.method ?? "(no method)"}${event.tool ? ` (tool ${event.tool})` : ""}, ${event.direction}, server ${event.server}`,
    "rules:",
    ...(rules.length === 0 ? ["  (none)"] : rules.map((r) => `  ${r.matched ? "✓" : "✗"} ${r.name} (${r.action}): ${r.conditions}`)),
    "fired:",
    ...(decision.rules.length === 0
      ? ["  (nothing)"]
      : decision.rules.map((r) => {
          const findings = (r.findings ?? []).map((f) => `\n      ${f.type} at ${f.path}${f.detail ? ` — ${f.detail}` : ""}`).join("");
          return `  ${r.name} → ${r.action}${r.reason ? `: ${r.reason}` : ""}${findings}`;
        })),
    `decision: ${decision.action}${decision.action === "deny" ? (config.mode === "enforce" ? " (enforce mode: blocked)" : " (monitor mode: recorded, not blocked)") : ""}`,
  ];
  process.stdout.write(`${out.join("\n")}\n`);
}
