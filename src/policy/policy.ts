import type { TableEvictedRecord } from "../bounds/evictions.js";
import type { RpcEvent } from "../mcp/rpc-event.js";
import type { Decision, DecisionRule, PolicyFinding } from "../mcp/decision.js";
import type { Action, DetectorName, DetectorSetting, PolicyConfig, RateLimit, Rule } from "./config.js";
import { judgedMessage, toolArguments, type JudgedMessage } from "./judged-message.js";
import { buildMatchers, explainAll, type Matcher } from "./matchers.js";
import { MAX_PINNED_NAME_BYTES, type PinStore } from "./pin-store.js";
import { RateLimiter, type RateLimitCounter, type RateLimitOverflowWarning, type RateLimitVerdict } from "./rate-limiter.js";
import { CATALOG_BOUNDS, ToolCatalog, toolDigest, toolsOf } from "./tool-catalog.js";
import { ContentScan, scanContent, type ContentDetectorName, type ContentDetectors } from "./content-scan.js";
import { SlicedScans } from "./sliced-scan.js";
import { senderPeer } from "../mcp/table-peer.js";
import { appContentsOf, appPinName, appPins } from "../apps/app-messages.js";
import { appFindings } from "../apps/app-checks.js";

export type { Decision, DecisionRule, PolicyFinding } from "../mcp/decision.js";

export type { ContentDetector, ContentDetectors } from "./content-scan.js";

/** Conditions worth a log record of their own (not tied to one message). */
export type PolicyWarn = (w: RateLimitOverflowWarning | TableEvictedRecord) => void;

type PinObservation = ReturnType<PinStore["observe"]>;

/** What the policy asks of a pin store: the file store, or the shared one of src/state/ (which answers asynchronously). */
export interface ToolPinStore {
  observe(server: string, tools: readonly { name: string; sha256: string; firstUse?: boolean }[], now: Date): PinObservation | Promise<PinObservation>;
}

export interface PolicyDeps {
  detectors: ContentDetectors;
  pins: ToolPinStore | null;
  /** Counters kept elsewhere (src/state/: shared by replicas); default: this process's RateLimiter. */
  rateLimiter?: (limit: RateLimit, ctx: { now: () => number; warn?: PolicyWarn; enforcing: boolean }) => RateLimitCounter;
  now?: () => number;
  warn?: PolicyWarn;
  /**
   * `decide` scans a long message in slices and answers with a promise (sliced-scan.ts): the proxy's, whose
   * loop serves every connection; a stdio launch judges each line at once.
   */
  slicedScans?: boolean;
}

const CONTENT_DETECTORS: ReadonlySet<DetectorName> = new Set(["secrets", "pii", "hiddenText", "poisoning"]);

/** Findings that say a check was skipped (and why) rather than that something is wrong. */
const NOTE_TYPES = new Set(["schema_unchecked", "pins_not_saved"]);


/**
 * Judges every message: all matching rules apply, deny beats allow, flags accumulate; detectors and rate
 * limits add their own entries. Learns tool definitions (for pinning and schema checks) as it goes.
 */
export class Policy {
  private readonly rules: { rule: Rule; matchers: Matcher[] }[];
  private readonly limiters: { limiter: RateLimitCounter; matchers: Matcher[] }[];
  private readonly catalog: ToolCatalog;
  private readonly now: () => number;
  /** Long messages are scanned in slices (decide only): the loop serves other connections meanwhile. */
  private readonly slicedScans: SlicedScans | null;

  constructor(
    readonly config: PolicyConfig,
    private readonly deps: PolicyDeps,
  ) {
    this.now = deps.now ?? Date.now;
    this.slicedScans = deps.slicedScans ? new SlicedScans() : null;
    this.catalog = new ToolCatalog(CATALOG_BOUNDS, (r) => deps.warn?.(r));
    this.rules = config.rules.map((rule) => ({ rule, matchers: buildMatchers(rule.match) }));
    const counter = deps.rateLimiter ?? ((limit, ctx) => new RateLimiter(limit, ctx.now, ctx.warn));
    const ctx = { now: this.now, enforcing: config.mode === "enforce", ...(deps.warn ? { warn: deps.warn } : {}) };
    this.limiters = config.rateLimits.map((limit) => ({ limiter: counter(limit, ctx), matchers: buildMatchers(limit.match) }));
  }

  get enforcing(): boolean {
    return this.config.mode === "enforce";
  }

  /**
   * Judges a message, waiting where shared state (src/state/) must answer: a rate limit it counts for or the
   * pins of a `tools/list` answer. With this process's own counters and pins the decision comes at once;
   * otherwise a promise of it, settled by the answer or by the store's deadline (never by blocking).
   */
  decide(e: RpcEvent): Decision | Promise<Decision> {
    const parts = this.judgeParts(e, true, true);
    if (!parts.some(isPromise)) return this.decision(e, (parts as DecisionRule[][]).flat());
    return Promise.all(parts).then((settled) => this.decision(e, settled.flat()));
  }

  /**
   * The decision at once. `observe: false` judges without remembering anything (tools learned, pins, rate
   * counts): for other readings of a message already judged once. A policy whose state must be waited for
   * throws here: such a policy is asked through decide().
   */
  judge(e: RpcEvent, { observe = true }: { observe?: boolean } = {}): Decision {
    const parts = this.judgeParts(e, observe, false);
    if (parts.some(isPromise)) throw new Error("the policy waits for shared state here: judge with decide()");
    return this.decision(e, (parts as DecisionRule[][]).flat());
  }

  /**
   * The rule entries of a message, in record order; an entry list that shared state must answer is a promise,
   * and so are the content detectors' entries of a long message when `sliced` (see sliced-scan.ts).
   */
  private judgeParts(e: RpcEvent, observe: boolean, sliced: boolean): (DecisionRule[] | Promise<DecisionRule[]>)[] {
    if (e.kind === "unanswered") return [];
    const m = judgedMessage(e);
    const parts: (DecisionRule[] | Promise<DecisionRule[]>)[] = [];
    const hits: DecisionRule[] = [];
    parts.push(hits);
    for (const { rule, matchers } of this.rules) {
      if (matchers.every((x) => x.matches(m))) hits.push(ruleHit(rule));
    }
    if (e.kind !== "invalid") {
      // The content detectors walk each part of the message once, together.
      const content = sliced && this.slicedScans ? this.slicedScans.run(senderPeer(e), e.bytes, new ContentScan(m, this.config.detectors, this.deps.detectors)) : scanContent(m, this.config.detectors, this.deps.detectors);
      for (const name of Object.keys(this.config.detectors) as DetectorName[]) {
        const setting: DetectorSetting = this.config.detectors[name];
        if (setting === "off" || (!observe && name === "toolPinning")) continue;
        const findings = CONTENT_DETECTORS.has(name) ? contentFindings(content, name as ContentDetectorName) : this.detect(name, m);
        parts.push(isPromise(findings) ? findings.then((f) => detectorHits(name, setting, f)) : detectorHits(name, setting, findings));
      }
      for (const { limiter, matchers } of observe ? this.limiters : []) {
        if (!countsFor(limiter.limit, m) || !matchers.every((x) => x.matches(m))) continue;
        const verdict = limiter.check(m);
        parts.push(isPromise(verdict) ? verdict.then((v) => limitHits(limiter.limit, m, v)) : limitHits(limiter.limit, m, verdict));
      }
    }
    if (observe) this.learn(m);
    return parts;
  }

  private decision(e: RpcEvent, hits: DecisionRule[]): Decision {
    if (e.kind === "unanswered") return { action: "allow", enforced: false, rules: [] };
    const action = this.combine(hits);
    return { action, enforced: action === "deny" && this.enforcing && e.kind !== "invalid", rules: hits };
  }

  /** At shutdown: the tool catalog's evictions still counted are written. */
  flushEvictions(): void {
    this.catalog.flushEvictions();
  }

  /** A CONNECT target denied by a rule that names only a server: refused before any byte (enforce mode). */
  judgeConnect(host: string, port: number): { rule: string; reason: string } | null {
    const server = `${host.includes(":") ? `[${host}]` : host}:${port}`;
    const m: JudgedMessage = { server, host, session: null, direction: "client_to_server", kind: "request", method: undefined, tool: undefined, raw: undefined };
    for (const { rule, matchers } of this.rules) {
      const onlyServer = Object.keys(rule.match).every((k) => k === "server") && rule.match.server !== undefined;
      if (rule.action === "deny" && onlyServer && matchers.every((x) => x.matches(m))) {
        return { rule: rule.name, reason: rule.reason ?? `host ${host} is denied by rule ${rule.name}` };
      }
    }
    return null;
  }

  /** For `policy explain`: every rule with each of its conditions and whether it held. */
  explainRules(e: RpcEvent): { name: string; action: Action; matched: boolean; conditions: string }[] {
    const m = judgedMessage(e);
    return this.rules.map(({ rule, matchers }) => ({
      name: rule.name,
      action: rule.action,
      matched: matchers.every((x) => x.matches(m)),
      conditions: matchers.length === 0 ? "every message" : matchers.map((x) => `${x.matches(m) ? "✓" : "✗"} ${x.explain()}`).join("; "),
    }));
  }

  describeRule(rule: Rule): string {
    return explainAll(buildMatchers(rule.match));
  }

  private combine(hits: DecisionRule[]): Decision["action"] {
    if (hits.some((h) => h.action === "deny")) return "deny";
    const allowed = hits.some((h) => h.action === "allow");
    if (!allowed && this.config.default === "deny") {
      hits.push({ name: "default", action: "deny", reason: "no rule allows this message (default: deny)" });
      return "deny";
    }
    return hits.some((h) => h.action === "flag") ? "flag" : "allow";
  }

  private detect(name: DetectorName, m: JudgedMessage): PolicyFinding[] | Promise<PolicyFinding[]> {
    if (!m.raw) return [];
    switch (name) {
      case "toolPinning":
        return this.pinFindings(m);
      case "schema":
        return this.schemaFindings(m);
      case "apps":
        return m.kind === "response" && m.method === "resources/read" ? appContentsOf((m.raw as { result?: unknown }).result).flatMap(appFindings) : [];
      default:
        return [];
    }
  }

  private pinFindings(m: JudgedMessage): PolicyFinding[] | Promise<PolicyFinding[]> {
    if (this.deps.pins && m.kind === "response" && m.method === "resources/read") return this.appPinFindings(m);
    if (!this.deps.pins || m.kind !== "response" || m.method !== "tools/list") return [];
    const out: PolicyFinding[] = [];
    const hashed: { name: string; sha256: string; index: number }[] = [];
    toolsOf((m.raw as { result?: unknown }).result).forEach((tool, index) => {
      if (Buffer.byteLength(tool.name) > MAX_PINNED_NAME_BYTES) {
        out.push({ type: "tool_unpinnable", path: `/result/tools/${index}`, detail: `tool ${JSON.stringify(tool.name.slice(0, 64))}… cannot be pinned (its name is longer than ${MAX_PINNED_NAME_BYTES} bytes)` });
        return;
      }
      try {
        hashed.push({ name: tool.name, sha256: toolDigest(tool.definition), index });
      } catch (err) {
        out.push({ type: "tool_unpinnable", path: `/result/tools/${index}`, detail: `tool ${JSON.stringify(tool.name)} cannot be pinned (${(err as Error).message})` });
      }
    });
    const observed = this.deps.pins.observe(m.server, hashed, new Date(this.now()));
    return isPromise(observed) ? observed.then((o) => withPinVerdicts(out, hashed, o)) : withPinVerdicts(out, hashed, observed);
  }

  /** An app's HTML and `_meta.ui`, pinned beside its server's tools on first read; a later change is `ui_changed`. */
  private appPinFindings(m: JudgedMessage): PolicyFinding[] | Promise<PolicyFinding[]> {
    const pins = appPins(appContentsOf((m.raw as { result?: unknown }).result), m.readUri);
    const unpinnable = pins.filter((app) => Buffer.byteLength(appPinName(app.uri)) > MAX_PINNED_NAME_BYTES);
    const found = unpinnable.map((app): PolicyFinding => ({ type: "tool_unpinnable", path: app.path, detail: `app ${JSON.stringify(`${app.uri.slice(0, 64)}…`)} cannot be pinned (its URI is longer than the pin store's names)` }));
    const apps = pins.filter((app) => !unpinnable.includes(app));
    if (apps.length === 0) return found;
    const observed = this.deps.pins!.observe(m.server, apps.map((app) => ({ name: appPinName(app.uri), sha256: app.sha256, firstUse: true })), new Date(this.now()));
    const findings = ({ verdicts, notSaved }: PinObservation): PolicyFinding[] => {
      const out: PolicyFinding[] = [...found];
      verdicts.forEach((seen, i) => {
        const app = apps[i]!;
        if (seen === "changed") out.push({ type: "ui_changed", path: app.path, detail: `app ${JSON.stringify(app.uri)} (its HTML or _meta.ui) differs from the pinned one` });
        if (seen === "store_full") out.push({ type: "pin_store_full", path: app.path, detail: `app ${JSON.stringify(app.uri)} is not pinned: the pin store holds as many entries or servers as it may` });
      });
      if (notSaved) out.push({ type: "pins_not_saved", path: "/result", detail: `the pin store could not be written (${notSaved})` });
      return out;
    };
    return isPromise(observed) ? observed.then(findings) : findings(observed);
  }

  private schemaFindings(m: JudgedMessage): PolicyFinding[] {
    if (m.kind !== "request" || m.method !== "tools/call" || m.tool === undefined) return [];
    const result = this.catalog.check(m.server, m.tool, toolArguments(m));
    if (result === undefined) return [];
    if (result === "unknown_tool") return [{ type: "unknown_tool", path: "/params/name", detail: `tool ${JSON.stringify(m.tool)} is not in the server's tools/list` }];
    if ("unchecked" in result) return [{ type: "schema_unchecked", path: "/params/name", detail: `inputSchema of tool ${JSON.stringify(m.tool)} not checked: ${result.unchecked}` }];
    return result.map((e) => ({ type: "schema_violation", path: `/params/arguments${e.instancePath}`, detail: e.message }));
  }

  private learn(m: JudgedMessage): void {
    if (m.kind === "response" && m.method === "tools/list") {
      this.catalog.learn(m.server, toolsOf((m.raw as { result?: unknown }).result));
    }
  }
}

/** What the pin store said of each tool, as findings after those found before asking it. */
function withPinVerdicts(found: PolicyFinding[], hashed: { name: string; index: number }[], { verdicts, notSaved }: PinObservation): PolicyFinding[] {
  const out = [...found];
  verdicts.forEach((seen, i) => {
    const { name, index } = hashed[i]!;
    const path = `/result/tools/${index}`;
    if (seen === "changed") out.push({ type: "tool_changed", path, detail: `tool ${JSON.stringify(name)} differs from its pinned definition (rug pull?)` });
    if (seen === "added") out.push({ type: "tool_added", path, detail: `tool ${JSON.stringify(name)} appeared after the server was pinned` });
    if (seen === "store_full") out.push({ type: "pin_store_full", path, detail: `tool ${JSON.stringify(name)} is not pinned: the pin store holds as many tools or servers as it may` });
  });
  out.sort((a, b) => toolIndex(a.path) - toolIndex(b.path));
  if (notSaved) out.push({ type: "pins_not_saved", path: "/result", detail: `the pin store could not be written (${notSaved})` });
  return out;
}

/** A detector's findings as rule entries: what it found at its setting, what it could not check as a flag-level note. */
function detectorHits(name: DetectorName, setting: Action, findings: PolicyFinding[]): DecisionRule[] {
  const hits: DecisionRule[] = [];
  // A check the proxy could not make is a flag-level note on the record, never a denial of its own.
  const notes = findings.filter((f) => NOTE_TYPES.has(f.type));
  const found = findings.filter((f) => !NOTE_TYPES.has(f.type));
  if (found.length > 0) hits.push({ name: `detector:${name}`, action: setting, reason: describeFindings(name, found), findings: found });
  if (notes.length > 0) hits.push({ name: `detector:${name}`, action: "flag", reason: describeFindings(name, notes), findings: notes });
  return hits;
}

/** A rate limit's entry for a message: over it, or counted without the shared counters (a flag-level note). */
function limitHits(limit: RateLimit, m: JudgedMessage, { over, overflow, reason, unshared }: RateLimitVerdict): DecisionRule[] {
  if (!over) return unshared === undefined ? [] : [{ name: limit.name, action: "flag", reason: unshared }];
  const per = overflow ? `per ${limit.per}; every tracked ${limit.per} is active, so new ones are counted in one shared overflow budget` : `per ${limit.per}`;
  return [overLimit(limit, m, reason ?? `over ${limit.perMinute} per minute (${per})`)];
}

type ContentFound = Map<ContentDetectorName, PolicyFinding[]>;

function contentFindings(content: ContentFound | Promise<ContentFound>, name: ContentDetectorName): PolicyFinding[] | Promise<PolicyFinding[]> {
  return isPromise(content) ? content.then((found) => found.get(name) ?? []) : (content.get(name) ?? []);
}

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return value instanceof Promise;
}

function toolIndex(path: string): number {
  return Number(path.slice("/result/tools/".length));
}

function ruleHit(rule: Rule): DecisionRule {
  return rule.reason === undefined ? { name: rule.name, action: rule.action } : { name: rule.name, action: rule.action, reason: rule.reason };
}

function describeFindings(detector: string, findings: PolicyFinding[]): string {
  const types = [...new Set(findings.map((f) => f.type))];
  return `${detector}: ${types.join(", ")} (${findings.length} finding${findings.length === 1 ? "" : "s"})`;
}

/**
 * A rate limit counts what starts a call (requests, in either direction, and notifications), not the
 * answers: counting both halves a limit, and an answer comes after the call ran. A match that names a
 * `kind` or a `direction` counts what it names.
 */
function countsFor(limit: RateLimit, m: JudgedMessage): boolean {
  if (limit.match.kind !== undefined || limit.match.direction !== undefined) return true;
  return m.kind === "request" || m.kind === "notification";
}

/** The entry of a limit a message is over. An answer is only flagged: denying it would not undo its call. */
function overLimit(limit: RateLimit, m: JudgedMessage, reason: string): DecisionRule {
  const answer = m.kind === "response" || m.kind === "error";
  if (!answer || limit.action !== "deny") return { name: limit.name, action: limit.action, reason };
  return { name: limit.name, action: "flag", reason: `${reason}; an answer is not denied for a rate limit: its call already ran` };
}
