import { isIPv6 } from "node:net";
import { readIpv6 } from "../util/ip-literal.js";
import type { Match } from "./config.js";
import { toolArguments, type JudgedMessage } from "./judged-message.js";
import { compilePattern } from "./pattern.js";

/** One condition of a rule, able to say what it checks (mockttp's matcher model). */
export interface Matcher {
  matches(m: JudgedMessage): boolean;
  explain(): string;
}

class PatternMatcher implements Matcher {
  private readonly test: (v: string) => boolean;
  constructor(
    private readonly label: string,
    private readonly pattern: string,
    private readonly read: (m: JudgedMessage) => string | undefined,
  ) {
    const compiled = compilePattern(pattern);
    if (!compiled.ok) throw new Error(compiled.error);
    this.test = compiled.test;
  }
  matches(m: JudgedMessage): boolean {
    const value = this.read(m);
    return value !== undefined && this.test(value);
  }
  explain(): string {
    return `${this.label} matches ${JSON.stringify(this.pattern)}`;
  }
}

class EqualsMatcher implements Matcher {
  constructor(
    private readonly label: string,
    private readonly expected: string,
    private readonly read: (m: JudgedMessage) => string | undefined,
  ) {}
  matches(m: JudgedMessage): boolean {
    return this.read(m) === this.expected;
  }
  explain(): string {
    return `${this.label} is ${this.expected}`;
  }
}

/**
 * A pattern with a port is matched against host:port, one without against the host alone. A glob with
 * two colons or more and no bracket ("::1", "fd00::*") is a bare IPv6 host, not host:port.
 */
function serverMatcher(written: string): Matcher {
  const pattern = readLiteralPattern(written);
  const bareIpv6 = !pattern.startsWith("re:") && !pattern.startsWith("[") && (pattern.match(/:/g)?.length ?? 0) > 1;
  const withPort = !bareIpv6 && /:\d+$|:\*$/.test(pattern);
  // A stdio server (`stdio:LABEL`) has no host and port: every pattern is matched against its whole name.
  return new PatternMatcher(withPort ? "server" : "server host", pattern, (m) => (withPort || m.server.startsWith("stdio:") ? m.server : m.host));
}

/**
 * A server pattern naming an IPv6 literal without wildcards is read as the proxy reads a target
 * ("[::ffff:127.0.0.1]:443" is 127.0.0.1:443, "0:0:0:0:0:0:0:1" is ::1): otherwise it could never match.
 */
function readLiteralPattern(pattern: string): string {
  if (pattern.startsWith("re:") || /[*?]/.test(pattern)) return pattern;
  const bracketed = /^\[([^\]]+)\](:\d+)?$/.exec(pattern);
  const [host, port = ""] = bracketed ? [bracketed[1]!, bracketed[2]] : [pattern, ""];
  if (!isIPv6(host)) return pattern;
  const read = readIpv6(host.toLowerCase());
  if (!read.ok) return pattern;
  if (port === "") return read.host;
  return isIPv6(read.host) ? `[${read.host}]${port}` : `${read.host}${port}`;
}

/** A task's final result answers tasks/result, and is the result of the call that created the task: either method matches. */
function methodMatcher(pattern: string): Matcher {
  const own = new PatternMatcher("method", pattern, (m) => m.method);
  const ofCall = new PatternMatcher("method", pattern, (m) => m.callMethod);
  return { matches: (m) => own.matches(m) || ofCall.matches(m), explain: () => own.explain() };
}

function argumentMatcher(path: string, pattern: string): Matcher {
  return new PatternMatcher(`argument ${JSON.stringify(path)}`, pattern, (m) => {
    let value: unknown = toolArguments(m);
    for (const key of path.split(".")) {
      // Own members only: "__proto__" or "constructor" in a path must not reach Object.prototype.
      if (typeof value !== "object" || value === null || !Object.hasOwn(value, key)) return undefined;
      value = (value as Record<string, unknown>)[key];
    }
    if (typeof value === "string") return value;
    if (typeof value === "number" || typeof value === "boolean") return String(value);
    return value === undefined ? undefined : JSON.stringify(value);
  });
}

export function buildMatchers(match: Match): Matcher[] {
  const out: Matcher[] = [];
  if (match.server !== undefined) out.push(serverMatcher(match.server));
  if (match.method !== undefined) out.push(methodMatcher(match.method));
  if (match.tool !== undefined) out.push(new PatternMatcher("tool", match.tool, (m) => m.tool));
  if (match.direction !== undefined) out.push(new EqualsMatcher("direction", match.direction, (m) => m.direction));
  if (match.kind !== undefined) out.push(new EqualsMatcher("kind", match.kind, (m) => m.kind));
  for (const [path, pattern] of Object.entries(match.args ?? {})) out.push(argumentMatcher(path, pattern));
  return out;
}

export function explainAll(matchers: readonly Matcher[]): string {
  return matchers.length === 0 ? "every message" : matchers.map((m) => m.explain()).join(" and ");
}
