import type { TextContext, TextFinding, TextScanner } from "./finding.js";

/** Clean texts remembered per scanner. */
const MAX_REMEMBERED = 2048;
/** Longer texts are scanned every time (rarely repeated, and costly to keep). */
const MAX_REMEMBERED_CHARS = 256;

/**
 * The scanner, skipping texts it found nothing in before in the same context (kind and member name). Member
 * names and short values come back in every message ("jsonrpc", "arguments", a tool's argument names and
 * usual values); the scanners are deterministic, so a text found clean stays clean. Findings are never
 * remembered, nor the texts that had any: those are scanned every time.
 */
export function rememberingClean(scanner: TextScanner): TextScanner {
  // kind → member name → texts found clean: no key to build per text.
  const clean = new Map<TextContext["kind"], Map<string | undefined, Set<string>>>();
  let remembered = 0;
  return {
    name: scanner.name,
    scanText(text: string, context: TextContext): TextFinding[] {
      if (text.length > MAX_REMEMBERED_CHARS) return scanner.scanText(text, context);
      const { kind, memberName } = context;
      if (clean.get(kind)?.get(memberName)?.has(text)) return [];
      const findings = scanner.scanText(text, context);
      if (findings.length > 0) return findings;
      if (remembered >= MAX_REMEMBERED) {
        clean.clear();
        remembered = 0;
      }
      let byMember = clean.get(kind);
      if (!byMember) clean.set(kind, (byMember = new Map()));
      let texts = byMember.get(memberName);
      if (!texts) byMember.set(memberName, (texts = new Set()));
      texts.add(text);
      remembered++;
      return findings;
    },
  };
}
