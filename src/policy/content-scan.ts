import type { PolicyFinding } from "../mcp/decision.js";
import { ValueScan, type Finding, type TextScanner } from "../detectors/index.js";
import type { DetectorSetting } from "./config.js";
import type { JudgedMessage } from "./judged-message.js";
import { appContentsOf } from "../apps/app-messages.js";
import { NOT_SCANNED } from "../log/secret-masks.js";

export type ContentDetectorName = "secrets" | "pii" | "hiddenText" | "poisoning";

export interface ContentDetector {
  scan(value: unknown, basePath?: string): PolicyFinding[];
  /** The scanner behind `scan`: given, it joins the one walk over each part of a message (scanContent). */
  scanner?: TextScanner;
}

export type ContentDetectors = Partial<Record<ContentDetectorName, ContentDetector>>;

/** Methods whose results describe tools, prompts or resources to the model: where poisoning hides. */
export const DESCRIBING_METHODS = new Set(["initialize", "tools/list", "prompts/list", "resources/list", "resources/templates/list"]);

interface Target {
  value: unknown;
  path: string;
  names: ContentDetectorName[];
}

/**
 * The findings of every enabled content detector on a message, walking each part of it once: secrets and
 * PII in its params, result or error; hidden text there too when it comes from the server; poisoning in the
 * result of a describing method and of a `resources/read` of an app (for a response, the same part: still one walk). A detector without a
 * scanner of its own (a test's) scans on its own. A member name any scanner flags is redacted in every
 * finding's path beneath it, whichever detector found that.
 */
export function scanContent(m: JudgedMessage, settings: Partial<Record<ContentDetectorName, DetectorSetting>>, detectors: ContentDetectors): Map<ContentDetectorName, PolicyFinding[]> {
  const scan = new ContentScan(m, settings, detectors);
  while (scan.step());
  return scan.found;
}

/**
 * `scanContent` one value of a walk at a time: `step()` says whether there is more; once it says no, `found`
 * holds what `scanContent` returns. A long message is scanned so, in slices between which the event loop runs
 * (src/policy/sliced-scan.ts).
 */
export class ContentScan {
  readonly found = new Map<ContentDetectorName, PolicyFinding[]>();
  private readonly targets: Target[] = [];
  private current: ValueScan | null = null;

  constructor(
    m: JudgedMessage,
    settings: Partial<Record<ContentDetectorName, DetectorSetting>>,
    private readonly detectors: ContentDetectors,
  ) {
    const raw = m.raw as Record<string, unknown> | undefined;
    if (!raw) return;
    const targets = this.targets;
    const want = (name: ContentDetectorName, value: unknown, path: string): void => {
      const setting = settings[name];
      if (setting === undefined || setting === "off") return;
      let target = targets.find((t) => t.value === value && t.path === path);
      if (!target) targets.push((target = { value, path, names: [] }));
      target.names.push(name);
    };
    const field = "params" in raw ? "params" : "result" in raw ? "result" : "error" in raw ? "error" : null;
    if (field) {
      want("secrets", raw[field], `/${field}`);
      want("pii", raw[field], `/${field}`);
      if (m.direction === "server_to_client") want("hiddenText", raw[field], `/${field}`);
    }
    if (m.kind === "response" && DESCRIBING_METHODS.has(m.method ?? "")) want("poisoning", raw.result, "/result");
    // An app's HTML is text a host shows and a model may read: poisoning is looked for there too.
    else if (m.kind === "response" && m.method === "resources/read" && appContentsOf(raw.result).length > 0) want("poisoning", raw.result, "/result");
    targets.reverse();
  }

  get result(): Map<ContentDetectorName, PolicyFinding[]> {
    return this.found;
  }

  /** Every part this scan would have walked marked as not scanned at all (`not_scanned`), saying why. */
  skipped(reason: string): Map<ContentDetectorName, PolicyFinding[]> {
    this.current = null;
    for (const target of this.targets.splice(0)) {
      for (const name of target.names) this.add([{ detector: name, type: NOT_SCANNED, path: target.path, detail: reason }]);
    }
    return this.found;
  }

  step(): boolean {
    if (this.current?.step()) return true;
    if (this.current) this.add(this.current.findings);
    const target = this.targets.pop();
    if (!target) {
      this.current = null;
      return false;
    }
    const scanners: TextScanner[] = [];
    for (const name of target.names) {
      const detector = this.detectors[name];
      if (!detector) continue;
      if (detector.scanner) scanners.push(detector.scanner);
      else this.found.set(name, detector.scan(target.value, target.path));
    }
    this.current = new ValueScan(scanners, target.value, { basePath: target.path });
    return true;
  }

  private add(findings: readonly Finding[]): void {
    for (const finding of findings) {
      const name = finding.detector as ContentDetectorName;
      const list = this.found.get(name);
      if (list) list.push(finding);
      else this.found.set(name, [finding]);
    }
  }
}
