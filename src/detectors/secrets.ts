import type { TextContext, TextFinding, TextScanner } from "./finding.js";
import { matchRules, redactedHint, type PatternRule, type RuleMatch } from "./pattern-rules.js";

/**
 * Credentials by shape. Every pattern is fenced by look-arounds on the token's own alphabet rather
 * than `\b` (tokens contain `-` and `_`), which also keeps the scan linear: inside a long run of
 * token characters a match can only start where the run starts.
 */

const hasDigit = /[0-9]/;
const hasLower = /[a-z]/;
const hasUpper = /[A-Z]/;

/** Random keys mix letters and digits; hyphenated words and placeholders ("your-api-key-here") do not. */
function looksRandom(token: string): boolean {
  const digits = token.replace(/[^0-9]/g, "").length;
  const letters = token.replace(/[^A-Za-z]/g, "").length;
  let longestSegment = 0;
  for (const segment of token.matchAll(/[^-_.]+/g)) longestSegment = Math.max(longestSegment, segment[0].length);
  return digits >= 3 && letters >= 3 && longestSegment >= 16;
}

function prefixed(visiblePrefix: number, accept: (token: string) => boolean = () => true) {
  return (match: RegExpExecArray): RuleMatch | null =>
    accept(match[0]) ? { detail: redactedHint(match[0], visiblePrefix) } : null;
}

function decodeBase64Url(part: string): string {
  return Buffer.from(part, "base64url").toString("utf8");
}

function checkJwt(match: RegExpExecArray): RuleMatch | null {
  let header: unknown;
  try {
    header = JSON.parse(decodeBase64Url(match[1]!));
  } catch {
    return null;
  }
  if (typeof header !== "object" || header === null) return null;
  const alg = (header as { alg?: unknown }).alg;
  if (typeof alg !== "string") return null;
  const shownAlg = /^[A-Za-z0-9+_-]{1,20}$/.test(alg) ? alg : "?";
  return { detail: `JWT alg=${shownAlg} (${match[0].length} chars)` };
}

/** Larger than any RSA-16384 private key in PEM. */
const MAX_PEM_BODY = 16_384;

function checkPrivateKey(match: RegExpExecArray, text: string): RuleMatch | null {
  const afterHeader = match.index + match[0].length;
  // A bare header in prose is not a key; real blocks carry base64 lines (possibly after "Proc-Type:" headers).
  if (!/[A-Za-z0-9+/]{40}/.test(text.slice(afterHeader, afterHeader + 400))) return null;
  // Bounded look-ahead: a text of many headers and no END line must not cost quadratic time.
  const block = text.slice(afterHeader, afterHeader + MAX_PEM_BODY);
  const endMarker = block.indexOf("-----END");
  const endClose = endMarker === -1 ? -1 : block.indexOf("-----", endMarker + 8);
  const end = endClose === -1 ? undefined : afterHeader + endClose + 5;
  const label = `${match[1] ?? ""}PRIVATE KEY`;
  const size = end === undefined ? "no END line" : `${end - match.index} chars`;
  return { detail: `-----BEGIN ${label}-----…(${size})`, end };
}

/** Documentation placeholders, not credentials: "postgres://user:password@host". */
const PLACEHOLDER_PASSWORD =
  /^(?:pass(?:word|wd)?|pwd|pw|secret|your[_-]?password|changeme|\*+|x+|\.\.\.|…|%s|<[^>]*>|\{[^}]*\}|\$\{[^}]*\}|\$[A-Z_]+)$/i;

function checkUrlCredentials(match: RegExpExecArray): RuleMatch | null {
  const [, scheme, , password, host] = match;
  if (PLACEHOLDER_PASSWORD.test(password!)) return null;
  return { detail: `${scheme}://…:…@${host}` };
}

const rules: PatternRule[] = [
  {
    type: "private_key",
    pattern: /-----BEGIN ((?:[A-Z0-9]+ ){0,3})PRIVATE KEY(?: BLOCK)?-----/g,
    check: checkPrivateKey,
  },
  {
    type: "jwt",
    pattern: /(?<![A-Za-z0-9_-])(eyJ[A-Za-z0-9_-]{6,})\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*(?![A-Za-z0-9_-]|\.[A-Za-z0-9_-])/g,
    check: checkJwt,
  },
  {
    type: "aws_access_key_id",
    pattern: /(?<![A-Za-z0-9])(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Za-z0-9])/g,
    check: prefixed(4),
  },
  {
    type: "aws_secret_access_key",
    pattern:
      /(?<![A-Za-z0-9])(?:aws[_\- ]?secret(?:[_\- ]?access)?[_\- ]?key|secret[_\- ]?access[_\- ]?key)["']?\s*[:=]\s*["']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])/gi,
    check: (match) => ({ detail: `…(${match[1]!.length} chars) after an AWS secret key name` }),
  },
  {
    type: "github_token",
    pattern: /(?<![A-Za-z0-9_])(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,251}(?![A-Za-z0-9_])/g,
    check: prefixed(4),
  },
  {
    type: "github_token",
    pattern: /(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{50,255}(?![A-Za-z0-9_])/g,
    check: prefixed(11),
  },
  {
    type: "gitlab_token",
    pattern: /(?<![A-Za-z0-9_-])glpat-[A-Za-z0-9_-]{20,255}(?![A-Za-z0-9_-])/g,
    check: prefixed(6),
  },
  {
    type: "slack_token",
    pattern: /(?<![A-Za-z0-9_-])xox[baprse]-[A-Za-z0-9-]{10,255}(?![A-Za-z0-9_-])/g,
    // Real tokens carry numeric team/user ids; "xoxb-your-bot-token" does not.
    check: prefixed(5, (token) => token.replace(/[^0-9]/g, "").length >= 4),
  },
  {
    type: "slack_webhook",
    pattern:
      /https:\/\/hooks\.slack\.com\/(services\/T[A-Z0-9]{6,}\/B[A-Z0-9]{6,}\/[A-Za-z0-9]{16,}|(?:workflows|triggers)\/T[A-Z0-9]{6,}\/[A-Za-z0-9/]{20,})/g,
    check: (match) => ({ detail: `https://hooks.slack.com/${match[1]!.split("/")[0]}/…` }),
  },
  {
    type: "stripe_key",
    pattern: /(?<![A-Za-z0-9_])(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,247}(?![A-Za-z0-9_])/g,
    check: prefixed(8),
  },
  {
    type: "anthropic_api_key",
    pattern: /(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{32,255}(?![A-Za-z0-9_-])/g,
    check: prefixed(7),
  },
  {
    type: "openai_api_key",
    pattern: /(?<![A-Za-z0-9_-])sk-(?!ant-)((?:proj-|svcacct-|admin-)?)[A-Za-z0-9_-]{20,255}(?![A-Za-z0-9_-])/g,
    check: (match) => (looksRandom(match[0]) ? { detail: redactedHint(match[0], 3 + match[1]!.length) } : null),
  },
  {
    type: "google_api_key",
    pattern: /(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])/g,
    check: prefixed(4),
  },
  {
    type: "npm_token",
    pattern: /(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9_])/g,
    check: prefixed(4, (token) => hasDigit.test(token) && (hasLower.test(token) || hasUpper.test(token))),
  },
  {
    type: "pypi_token",
    pattern: /(?<![A-Za-z0-9_-])pypi-Ag[A-Za-z0-9_-]{50,}(?![A-Za-z0-9_-])/g,
    check: prefixed(5),
  },
  {
    type: "twilio_api_key",
    pattern: /(?<![A-Za-z0-9_])SK[0-9a-fA-F]{32}(?![A-Za-z0-9_])/g,
    check: prefixed(2, (token) => hasDigit.test(token.slice(2)) && /[a-fA-F]/.test(token.slice(2))),
  },
  {
    type: "twilio_auth_token",
    pattern: /(?<![A-Za-z0-9])twilio[_\- ]?auth[_\- ]?token["']?\s*[:=]\s*["']?([0-9a-f]{32})(?![0-9A-Za-z])/gi,
    check: () => ({ detail: "…(32 chars) after a Twilio auth token name" }),
  },
  {
    type: "sendgrid_api_key",
    pattern: /(?<![A-Za-z0-9_.-])SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])/g,
    check: prefixed(3),
  },
  {
    type: "azure_storage_key",
    pattern: /(?<![A-Za-z0-9])(AccountKey|SharedAccessKey)=([A-Za-z0-9+/]{40,}={0,2})/g,
    check: (match) => ({ detail: `${match[1]}=…(${match[2]!.length} chars)` }),
  },
  {
    type: "url_credentials",
    pattern:
      /(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]{1,15}):\/\/([^\s:/?#@"'<>\\]{1,128}):([^\s/?#@"'<>\\]{1,256})@([A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])/g,
    check: checkUrlCredentials,
  },
  {
    // Last: a Bearer token that is a JWT or a known token is reported as that.
    type: "bearer_token",
    pattern: /(?<![A-Za-z0-9_])bearer\s+([A-Za-z0-9\-._~+/]{20,}=*)/gi,
    check: (match) => (looksRandom(match[1]!) ? { detail: `Bearer …(${match[1]!.length} chars)` } : null),
  },
];

/** Secret values whose shape is too generic to match alone, recognised by the member that holds them. */
function secretByMemberName(text: string, memberName: string | undefined): TextFinding | null {
  if (memberName === undefined) return null;
  const value = text.trim();
  if (/^(?:aws[_-]?)?secret[_-]?access[_-]?key$|^aws[_-]?secret(?:[_-]?key)?$/i.test(memberName)) {
    if (/^[A-Za-z0-9/+]{40}$/.test(value)) {
      return { type: "aws_secret_access_key", detail: "…(40 chars) in an AWS secret key member" };
    }
  }
  if (/twilio/i.test(memberName) && /token/i.test(memberName) && /^[0-9a-f]{32}$/.test(value)) {
    return { type: "twilio_auth_token", detail: "…(32 chars) in a Twilio token member" };
  }
  return null;
}

export const secretsScanner: TextScanner = {
  name: "secrets",
  scanText(text: string, context: TextContext): TextFinding[] {
    if (context.kind === "number" || text.length < 12) return [];
    const findings = matchRules(text, rules);
    const byMember = secretByMemberName(text, context.memberName);
    if (byMember && !findings.some((finding) => finding.type === byMember.type)) findings.push(byMember);
    return findings;
  },
};
