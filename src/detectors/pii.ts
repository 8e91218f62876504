import type { TextContext, TextFinding, TextScanner } from "./finding.js";
import { matchRules, type PatternRule, type RuleMatch } from "./pattern-rules.js";
import { cardBrand, germanTaxIdValid, ibanValid, luhnValid, nanpValid, ninoPrefixValid, ssnValid } from "./pii-validators.js";

/**
 * Personal data that can be validated, not merely shaped: checksums (Luhn, mod-97, ISO 7064),
 * numbering-plan rules, and for phone numbers only formats with punctuation or a leading `+`, so
 * that plain long numbers (ids, timestamps, amounts) are never reported.
 */

/** Reserved for documentation (RFC 2606, RFC 6761): addresses there belong to nobody. */
const RESERVED_EMAIL_DOMAIN = /(?:^|\.)(?:example\.(?:com|net|org)|example|test|invalid|localhost)$/i;
/** "icon@2x.png", "logo@3x.webp": asset names, not addresses. */
const FILE_EXTENSION_TLD = /^(?:png|jpe?g|gif|svg|webp|ico|bmp|tiff?|avif|js|mjs|cjs|ts|tsx|jsx|css|json|ya?ml|md|txt|html?|pdf|zip|gz)$/i;

function checkEmail(match: RegExpExecArray, text: string): RuleMatch | null {
  const [address, local, domain, tld] = match as unknown as [string, string, string, string];
  if (local.startsWith(".") || local.endsWith(".") || local.includes("..")) return null;
  if (RESERVED_EMAIL_DOMAIN.test(domain) || FILE_EXTENSION_TLD.test(tld)) return null;
  // "git@github.com:owner/repo.git" is an SSH remote.
  if (text[match.index + address.length] === ":" && /[^\s]/.test(text[match.index + address.length + 1] ?? " ")) {
    return null;
  }
  return { detail: `…@${domain.toLowerCase()}` };
}

const CARD_CONTEXT = /\b(?:card|credit|debit|visa|mastercard|amex|diners|jcb|discover|unionpay|pan|cc)\b/i;

function checkCard(match: RegExpExecArray): RuleMatch | null {
  const raw = match[0];
  const separators = new Set(raw.replace(/\d/g, ""));
  if (separators.size > 1) return null;
  if (separators.size === 1) {
    const groups = raw.split(/[ -]/);
    // Printed cards group 4-4-4-4(-3), 4-6-5 or 4-6-4; a run of short groups is something else.
    if (groups[0]!.length !== 4 || groups.some((group) => group.length < 3 || group.length > 6)) return null;
  }
  const digits = raw.replace(/\D/g, "");
  const brand = cardBrand(digits);
  if (!brand || !luhnValid(digits)) return null;
  // An unseparated run of 13, 14 or 17-19 digits is far more often a clock or an id than a card (one in ten
  // such runs passes Luhn): it counts only with a word about cards just before it.
  if (separators.size === 0 && digits.length !== 15 && digits.length !== 16 && !CARD_CONTEXT.test(match.input.slice(Math.max(0, match.index - 40), match.index))) {
    return null;
  }
  return { detail: `${brand}, ${digits.length} digits, Luhn-valid` };
}

function checkIban(match: RegExpExecArray): RuleMatch | null {
  const iban = match[0].replace(/ /g, "");
  return ibanValid(iban) ? { detail: `country ${iban.slice(0, 2)}, ${iban.length} chars, mod-97 valid` } : null;
}

function checkInternationalPhone(match: RegExpExecArray): RuleMatch | null {
  const raw = match[0];
  const digits = raw.replace(/\D/g, "");
  if (digits.length < 8 || digits.length > 15) return null;
  if (/[ .-]{2}|\(\s*\)|\([^)]*\(|\)[^(]*\)/.test(raw)) return null;
  if ((raw.match(/\(/g)?.length ?? 0) !== (raw.match(/\)/g)?.length ?? 0)) return null;
  // "+1-2-3-4-5-6-7-8" is arithmetic or a list, not a number anyone dials.
  const groups = raw.slice(1).split(/[ .()-]+/).filter(Boolean);
  if (groups.filter((group) => group.length === 1).length > 2) return null;
  return { detail: `international, ${digits.length} digits, country code +${digits[0]}…` };
}

function checkNanp(match: RegExpExecArray): RuleMatch | null {
  const area = match[1] ?? match[3]!;
  const exchange = match[2] ?? match[5]!;
  return nanpValid(area, exchange) ? { detail: "North American format" } : null;
}

function checkSsn(match: RegExpExecArray): RuleMatch | null {
  return ssnValid(match[1]!, match[2]!, match[3]!) ? { detail: "US SSN format, valid area/group/serial" } : null;
}

function checkNino(match: RegExpExecArray): RuleMatch | null {
  const spaces = match[0].split(" ").length - 1;
  if (spaces !== 0 && spaces !== 4) return null;
  return ninoPrefixValid(match[1]!) ? { detail: "UK National Insurance number format" } : null;
}

function checkGermanTaxId(match: RegExpExecArray): RuleMatch | null {
  return germanTaxIdValid(match[1]!.replace(/ /g, "")) ? { detail: "German tax id, check digit valid" } : null;
}

const cardRule: PatternRule = {
  type: "card_number",
  // Not a stretch out of a longer run of digit groups: "4111 1111 1111 1111 1111 1111" is no card.
  pattern: /(?<![\w.,+-]|\d[ -])\d(?:[ -]?\d){12,18}(?![\w]|[., -]\d)/g,
  check: checkCard,
};

const rules: PatternRule[] = [
  {
    type: "email",
    pattern:
      /(?<![A-Za-z0-9._%+-])([A-Za-z0-9._%+-]{1,64})@((?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.){1,8}([A-Za-z]{2,24}))(?![A-Za-z0-9-])/g,
    check: checkEmail,
  },
  {
    type: "iban",
    pattern: /(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?(?![A-Za-z0-9])/g,
    check: checkIban,
  },
  cardRule,
  {
    type: "us_ssn",
    pattern: /(?<![\w-])(\d{3})-(\d{2})-(\d{4})(?![\w]|-\d)/g,
    check: checkSsn,
  },
  {
    type: "uk_national_insurance_number",
    pattern: /(?<![A-Za-z0-9])([A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]) ?\d{2} ?\d{2} ?\d{2} ?[A-D](?![A-Za-z0-9])/g,
    check: checkNino,
  },
  {
    type: "german_tax_id",
    pattern:
      /(?<![A-Za-z0-9])(?:steuer[- ]?id(?:entifikationsnummer)?|steuerliche identifikationsnummer|idnr|tax id)\b[^0-9\n]{0,20}(?<!\d)(\d{2} ?\d{3} ?\d{3} ?\d{3})(?![\w])/gi,
    check: checkGermanTaxId,
  },
  {
    type: "phone_number",
    pattern: /(?<![\w+])\+[1-9][\d ().-]{6,22}\d(?![\w])/g,
    check: checkInternationalPhone,
  },
  {
    type: "phone_number",
    pattern: /(?<![\w+.(-])(?:\(([2-9]\d\d)\) ?([2-9]\d\d)-\d{4}|([2-9]\d\d)([-.])([2-9]\d\d)\4\d{4})(?![\w]|[-.]\d)/g,
    check: checkNanp,
  },
  {
    type: "phone_number",
    // UK (07xxx xxxxxx, 020 xxxx xxxx, 01xxx xxxxxx, 0xxx xxx xxxx) and French (06 12 34 56 78) layouts.
    pattern:
      /(?<![\w+.-])(?:0(?:7\d{3} \d{6}|[1238]\d \d{4} \d{4}|[1238]\d\d \d{3} \d{4}|1\d{3} \d{5,6})|0[1-9]([ .])\d\d(?:\1\d\d){3})(?![\w]|[-.]\d)/g,
    check: () => ({ detail: "national format" }),
  },
];

const SSN_MEMBER = /^(?:ssn|social[_-]?security(?:[_-]?(?:number|no))?)$/i;
const GERMAN_TAX_ID_MEMBER = /^(?:steuer[_-]?id(?:nr)?|idnr|steuer[_-]?identifikationsnummer)$/i;

/** Bare digits are PII only when the member that holds them says what they are. */
function piiByMemberName(text: string, memberName: string | undefined): TextFinding | null {
  if (memberName === undefined) return null;
  const value = text.trim();
  if (SSN_MEMBER.test(memberName)) {
    const parts = /^(\d{3})-?(\d{2})-?(\d{4})$/.exec(value);
    if (parts && ssnValid(parts[1]!, parts[2]!, parts[3]!)) {
      return { type: "us_ssn", detail: "valid SSN digits in an SSN member" };
    }
  }
  if (GERMAN_TAX_ID_MEMBER.test(memberName) && germanTaxIdValid(value.replace(/ /g, ""))) {
    return { type: "german_tax_id", detail: "German tax id in a tax id member, check digit valid" };
  }
  return null;
}

export const piiScanner: TextScanner = {
  name: "pii",
  scanText(text: string, context: TextContext): TextFinding[] {
    if (text.length < 6) return [];
    // A JSON number can be a card number or a bare SSN, nothing else here.
    const findings = matchRules(text, context.kind === "number" ? [cardRule] : rules);
    const byMember = piiByMemberName(text, context.memberName);
    if (byMember && !findings.some((finding) => finding.type === byMember.type)) findings.push(byMember);
    return findings;
  },
};
