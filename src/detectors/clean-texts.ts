import type { TextContext, TextFinding, TextScanner } from "./finding.js";

/** Clean texts remembered per scanner. */
const MAX_REMEMBERED = 2048;
/** Longer texts are scanned every time (rarely repeated, and costly to keep). */
const MAX_REMEMBERED_CHARS = 256;
/** Texts under a longer member name are scanned every time: the name is kept too, and a peer chooses it. */
const MAX_MEMBER_NAME_CHARS = 64;

/**
 * The scanner, skipping texts it found nothing in before in the same context (kind and member name). Member
 * names and short values come back in every message ("jsonrpc", "arguments", a tool's argument names and
 * usual values); the scanners are deterministic, so a text found clean stays clean. Findings are never
 * remembered, nor the texts that had any: those are scanned every time. What is kept is bounded: 2,048 texts
 * of at most 256 characters, under member names of at most 64. `minChars`: shorter texts are scanned without
 * being remembered (the scanner finds nothing that short, and they would only fill the memo).
 */
export function rememberingClean(scanner: TextScanner, minChars = 0): TextScanner {
  // kind → member name → texts found clean: no key to build per text.
  const clean = new Map<TextContext["kind"], Map<string | undefined, Set<string>>>();
  let remembered = 0;
  return {
    name: scanner.name,
    scanText(text: string, context: TextContext): TextFinding[] {
      const { kind, memberName } = context;
      if (text.length < minChars || text.length > MAX_REMEMBERED_CHARS || (memberName?.length ?? 0) > MAX_MEMBER_NAME_CHARS) {
        return scanner.scanText(text, context);
      }
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
