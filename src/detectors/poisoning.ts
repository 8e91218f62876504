import type { TextFinding, TextScanner } from "./finding.js";
import { stripHidden } from "./hidden-text.js";
import { quote } from "./pattern-rules.js";

/**
 * Instructions aimed at the model inside text the user does not read closely: tool, prompt and
 * resource descriptions, and tool results. Tuned for precision on ordinary descriptions, which
 * describe what a tool does ("Reads a file", "Sends a message to a channel"); the patterns look
 * for what poisoned ones do instead: address the model, hide things from the user, point it at
 * credentials, or reach over to other tools and remote endpoints.
 */

interface PoisoningRule {
  type: string;
  pattern: RegExp;
  /** Extra condition on the match; the normalized text is passed for context checks. */
  accept?(match: RegExpExecArray, text: string): boolean;
}

const SENTENCE_BREAK = /[.!?](?:\s|$)|\n/g;

/** Imperative verbs that ask for a file's contents (third-person "reads" describes a tool and is not one). */
const FETCH_VERB =
  /\b(?:read|cat|open|load|include|send|pass|provide|upload|attach|fetch|access|copy|print|output|paste|extract|exfiltrate|leak|share|append|embed|contents?\s+of)\b/i;

/** After the path: "…id_rsa and pass its content as 'sidenote'", "…must be passed along". */
const HAND_OVER_VERB = /\b(?:pass(?:ed)?|sen[dt]|include[ds]?|upload(?:ed)?|attach(?:ed)?|embed(?:ded)?|append(?:ed)?)\b/i;

/** Same sentence, up to 120 characters before the match and 80 after. */
function sentenceAround(text: string, start: number, end: number): { before: string; after: string } {
  let before = text.slice(Math.max(0, start - 120), start);
  let lastBreak = -1;
  for (const breakMatch of before.matchAll(SENTENCE_BREAK)) lastBreak = breakMatch.index + breakMatch[0].length;
  if (lastBreak >= 0) before = before.slice(lastBreak);
  let after = text.slice(end, end + 80);
  const nextBreak = after.search(/[.!?](?:\s|$)|\n/);
  if (nextBreak >= 0) after = after.slice(0, nextBreak);
  return { before, after };
}

const SENSITIVE_PATH = new RegExp(
  [
    String.raw`(?:~|\$HOME|%USERPROFILE%)?[\\/]?\.ssh\b(?:[\\/][\w.-]*)?`,
    String.raw`\bid_(?:rsa|dsa|ecdsa|ed25519)\b(?!\.pub)`,
    String.raw`(?<![\w.-])\.env(?!\.(?:example|sample|template|dist)\b)(?:\.[\w-]+)?\b`,
    String.raw`\.aws[\\/](?:credentials|config)\b`,
    String.raw`/etc/(?:passwd|shadow|sudoers)\b`,
    String.raw`(?<![\w-])(?:mcp|claude_desktop_config)\.json\b`,
    String.raw`(?<![\w-])\.(?:npmrc|pypirc|netrc|git-credentials|bash_history|zsh_history)\b`,
    String.raw`\.docker[\\/]config\.json\b`,
    String.raw`\.kube[\\/]config\b`,
    String.raw`\.gnupg\b`,
  ].join("|"),
  "gi",
);

const NEGATION = String.raw`(?:do\s+not|don't|never|must\s+not|should\s+not)`;

const rules: PoisoningRule[] = [
  {
    type: "important_tag",
    pattern: /<\s*\/?\s*(?:important|critical|urgent)\s*>/gi,
  },
  {
    type: "system_tag",
    pattern:
      /<\s*\/?\s*(?:system|system[_-]?prompt|sys|admin|override)\s*>|\[\/?(?:INST|SYS|SYSTEM)\]|<<\/?SYS>>|<\|(?:im_start|im_end|system|endoftext|start_header_id|end_header_id|eot_id)\|>/gi,
  },
  {
    type: "ignore_instructions",
    pattern:
      /\b(?:ignore|disregard|forget|override|bypass)\s+(?:(?:all|any|the|your|of|these|my)\s+)*(?:previous|prior|above|earlier|preceding|system|original|existing|other)\s+(?:instructions?|prompts?|rules|directions|directives|guidelines|guidance|constraints)\b/gi,
  },
  {
    type: "conceal_from_user",
    pattern: new RegExp(
      [
        String.raw`\b(?:${NEGATION}\s+(?:tell|inform|notify|alert|mention|reveal|show|disclose|explain)|without\s+(?:tell|inform|notify|alert)(?:ing)?)\b[^.!?\n]{0,40}?\b(?:the\s+)?users?\b(?!'s|')`,
        String.raw`\b${NEGATION}\s+let\s+the\s+user\s+(?:know|see|notice)\b`,
        String.raw`\bthe\s+user\s+(?:must|should|need|needs)\s*(?:not|n't)\s+(?:know|see|notice|be\s+(?:told|informed|aware))\b`,
        String.raw`\b(?:keep|hide)\s+(?:this|it|these|them)\b[^.!?\n]{0,20}?\bfrom\s+the\s+user\b`,
        String.raw`\b${NEGATION}\s+(?:reveal|disclose|mention)\s+(?:this|these|that|it)\b`,
        String.raw`\b${NEGATION}\s+(?:reveal|disclose|mention|show|display)\s+(?:the\s+|these\s+)?(?:instructions?|side\s*notes?|steps?\s+above)\b`,
      ].join("|"),
      "gi",
    ),
  },
  {
    type: "before_using_read",
    pattern:
      /\bbefore\s+(?:using|calling|invoking|running|executing|you\s+use|you\s+call)\s+(?:this|the|any)\s+(?:[\w-]+\s+)?(?:tool|function|server)\b[^.!?\n]{0,80}?\b(?:read|cat|open|load|fetch|access|pass|include|send|provide|attach|upload)\b/gi,
  },
  {
    type: "read_sensitive_file",
    pattern: SENSITIVE_PATH,
    accept(match, text) {
      if (/\.pub$/i.test(match[0])) return false; // a public key
      const { before, after } = sentenceAround(text, match.index, match.index + match[0].length);
      return FETCH_VERB.test(before) || HAND_OVER_VERB.test(after);
    },
  },
  {
    type: "cross_server",
    pattern: new RegExp(
      [
        String.raw`\bwhen(?:ever)?\s+(?:the\s+user|you|the\s+(?:assistant|model|agent|llm))\s+(?:calls?|uses?|invokes?|runs?|executes?|wants?\s+to\s+(?:use|call|send))\s+(?:the\s+|a\s+|any\s+)?(?!this\b|it\b)(?:[\`'"]?[a-z0-9]+[_.-][\w.-]*[\`'"]?|[\`'"][^\`'"\n]{1,40}[\`'"]|(?:other|another|any)\s+tools?\b|[\w-]+\s+tool\b)`,
        String.raw`\binstead\s+of\s+(?:using\s+|calling\s+)?(?:the\s+)?(?:actual|real|intended|original|specified|requested|provided|user's|given)\s+(?:recipients?|address(?:es)?|destinations?|emails?|url|endpoint|server|account|number|channel)\b`,
        String.raw`\b(?:send|forward|redirect|route)\s+(?:all\s+)?(?:emails?|messages?|requests?|payments?|transfers?|calls?)\s+to\s+\S+\s+instead\b`,
        String.raw`\b(?:must|should|always)\s+(?:send|forward|redirect|route)\s+(?:all|every)\s+(?:emails?|messages?|requests?|payments?|transfers?)\s+to\b`,
        String.raw`\balso\s+(?:send|forward|copy|cc|bcc|email|post|upload|share)\b[^.!?\n]{0,60}?\bto\b`,
        String.raw`\b(?:side[\s-]effects?\s+on|changes?\s+the\s+behaviou?r\s+of|modif(?:y|ies)\s+the\s+behaviou?r\s+of)\b[^.!?\n]{0,40}?\b(?:other|another|all|every|the\s+also\s+present)\s+(?:[\w-]+\s+)?(?:tools?|servers?|functions?)\b`,
      ].join("|"),
      "gi",
    ),
  },
  {
    type: "exfiltration",
    pattern: new RegExp(
      [
        String.raw`\b(?:send|post|upload|forward|transmit|exfiltrate|leak|beacon)\s+(?:it|them|this|that|everything|(?:the|a|any|all|your|its|their)\s+(?:[\w-]+\s+){0,3}?(?:data|results?|outputs?|responses?|contents?|files?|conversation|chat|history|messages?|keys?|tokens?|credentials?|secrets?|passwords?|information|details|context|prompt|instructions|variables))\b[^.!?\n]{0,40}?\bto\s+<?(?:https?:\/\/|(?:the\s+)?(?:following\s+)?(?:url|endpoint|webhook)\b)`,
        String.raw`\b(?:include|add|append|embed|put|encode|insert|pass)\s+(?:(?:the|your|all|any|its|their|full|entire|whole|complete)\s+)*(?:conversation|chat\s+history|message\s+history|previous\s+messages|system\s+prompt|instructions|context\s+window|ssh\s+keys?|private\s+keys?|env(?:ironment)?\s+variables|contents?\s+of\s+(?:the\s+)?(?:file|~|\.|\/)\S*)\b[^.!?\n]{0,60}?\b(?:in|into|as|to|within)\s+(?:the\s+|a\s+|an\s+)?(?:url|query(?:\s+string)?|query\s+param(?:eter)?s?|(?:[\`'"]?\w+[\`'"]?\s+)?(?:parameter|param|argument|field)|sidenote|side\s+note)\b`,
        // "pass its content as 'sidenote'": the content of something read before, into a side channel.
        String.raw`\b(?:include|add|append|embed|put|encode|insert|pass)\s+(?:its|their)\s+contents?\b[^.!?\n]{0,30}?\b(?:in|into|as|to|within)\s+(?:the\s+|a\s+)?(?:url|query(?:\s+string)?|[\`'"]?side\s?note[\`'"]?)`,
      ].join("|"),
      "gi",
    ),
  },
];

/**
 * Hidden characters removed (so "ig\u200Bnore" still reads "ignore"), compatibility forms folded
 * (fullwidth letters), typographic apostrophes made plain and whitespace runs collapsed.
 */
export function normalizeForMatching(text: string): string {
  return stripHidden(text)
    .normalize("NFKC")
    .replace(/[\u2018\u2019\u02BC]/g, "'")
    .replace(/\s+/g, " ");
}

const MAX_MATCHES_PER_RULE = 100;

export const poisoningScanner: TextScanner = {
  name: "poisoning",
  scanText(text, context): TextFinding[] {
    if (context.kind === "number" || text.length < 4) return [];
    const normalized = normalizeForMatching(text);
    const findings: TextFinding[] = [];
    for (const rule of rules) {
      rule.pattern.lastIndex = 0;
      let first: string | undefined;
      let count = 0;
      for (const match of normalized.matchAll(rule.pattern)) {
        if (rule.accept && !rule.accept(match, normalized)) continue;
        first ??= match[0];
        if (++count >= MAX_MATCHES_PER_RULE) break;
      }
      if (first !== undefined) {
        findings.push({ type: rule.type, detail: `"${quote(first)}"${count > 1 ? ` (+${count - 1} more)` : ""}` });
      }
    }
    return findings;
  },
};
