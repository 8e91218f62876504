/** Checksums and numbering-plan rules that keep the PII detector from flagging arbitrary digits. */

export function luhnValid(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let index = digits.length - 1; index >= 0; index--) {
    let digit = digits.charCodeAt(index) - 48;
    if (double) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
    double = !double;
  }
  return sum % 10 === 0;
}

interface CardRange {
  brand: string;
  from: number;
  to: number;
  lengths: readonly number[];
}

const sixteenToNineteen = [16, 17, 18, 19];

/** Issuer identification number ranges of the major networks, compared on the leading digits. */
const CARD_RANGES: readonly CardRange[] = [
  { brand: "visa", from: 4, to: 4, lengths: [13, 16, 19] },
  { brand: "mastercard", from: 51, to: 55, lengths: [16] },
  { brand: "mastercard", from: 2221, to: 2720, lengths: [16] },
  { brand: "amex", from: 34, to: 34, lengths: [15] },
  { brand: "amex", from: 37, to: 37, lengths: [15] },
  { brand: "discover", from: 6011, to: 6011, lengths: sixteenToNineteen },
  { brand: "discover", from: 644, to: 649, lengths: sixteenToNineteen },
  { brand: "discover", from: 65, to: 65, lengths: sixteenToNineteen },
  { brand: "diners", from: 300, to: 305, lengths: [14, 15, 16, 17, 18, 19] },
  { brand: "diners", from: 36, to: 36, lengths: [14, 15, 16, 17, 18, 19] },
  { brand: "diners", from: 38, to: 39, lengths: [16, 17, 18, 19] },
  { brand: "jcb", from: 3528, to: 3589, lengths: sixteenToNineteen },
  { brand: "unionpay", from: 62, to: 62, lengths: sixteenToNineteen },
  { brand: "maestro", from: 5018, to: 5018, lengths: [13, 14, 15, 16, 17, 18, 19] },
  { brand: "maestro", from: 5020, to: 5020, lengths: [13, 14, 15, 16, 17, 18, 19] },
  { brand: "maestro", from: 5038, to: 5038, lengths: [13, 14, 15, 16, 17, 18, 19] },
  { brand: "maestro", from: 5893, to: 5893, lengths: [13, 14, 15, 16, 17, 18, 19] },
  { brand: "maestro", from: 6304, to: 6304, lengths: [13, 14, 15, 16, 17, 18, 19] },
  { brand: "maestro", from: 6759, to: 6759, lengths: [13, 14, 15, 16, 17, 18, 19] },
  { brand: "maestro", from: 6761, to: 6763, lengths: [13, 14, 15, 16, 17, 18, 19] },
];

/** The card network when the digits have a known prefix and a length that network issues; else null. */
export function cardBrand(digits: string): string | null {
  for (const range of CARD_RANGES) {
    const prefix = Number(digits.slice(0, String(range.from).length));
    if (prefix >= range.from && prefix <= range.to && range.lengths.includes(digits.length)) return range.brand;
  }
  return null;
}

/** IBAN length by country (SWIFT IBAN registry). */
const IBAN_LENGTHS: Readonly<Record<string, number>> = {
  AD: 24, AE: 23, AL: 28, AT: 20, AZ: 28, BA: 20, BE: 16, BG: 22, BH: 22, BI: 27, BR: 29, BY: 28,
  CH: 21, CR: 22, CY: 28, CZ: 24, DE: 22, DJ: 27, DK: 18, DO: 28, EE: 20, EG: 29, ES: 24, FI: 18,
  FK: 18, FO: 18, FR: 27, GB: 22, GE: 22, GI: 23, GL: 18, GR: 27, GT: 28, HR: 21, HU: 28, IE: 22,
  IL: 23, IQ: 23, IS: 26, IT: 27, JO: 30, KW: 30, KZ: 20, LB: 28, LC: 32, LI: 21, LT: 20, LU: 20,
  LV: 21, LY: 25, MC: 27, MD: 24, ME: 22, MK: 19, MN: 20, MR: 27, MT: 31, MU: 30, NI: 28, NL: 18,
  NO: 15, OM: 23, PK: 24, PL: 28, PS: 29, PT: 25, QA: 29, RO: 24, RS: 22, RU: 33, SA: 24, SC: 31,
  SD: 18, SE: 24, SI: 19, SK: 24, SM: 27, SO: 23, ST: 25, SV: 28, TL: 23, TN: 24, TR: 26, UA: 29,
  VA: 22, VG: 24, XK: 20, YE: 30,
};

/** ISO 13616: right length for the country and mod-97 of the rearranged number equal to 1. */
export function ibanValid(iban: string): boolean {
  if (IBAN_LENGTHS[iban.slice(0, 2)] !== iban.length) return false;
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const char of rearranged) {
    const code = char.charCodeAt(0);
    const value = code >= 65 ? code - 55 : code - 48;
    remainder = (value >= 10 ? remainder * 100 + value : remainder * 10 + value) % 97;
  }
  return remainder === 1;
}

/** US SSA rules: area not 000, 666 or 9xx; group not 00; serial not 0000. */
export function ssnValid(area: string, group: string, serial: string): boolean {
  if (area === "000" || area === "666" || area.startsWith("9")) return false;
  if (group === "00" || serial === "0000") return false;
  // Numbers the SSA voided after they were printed in advertising.
  return `${area}${group}${serial}` !== "078051120" && `${area}${group}${serial}` !== "219099999";
}

const NINO_INVALID_PREFIXES = new Set(["BG", "GB", "KN", "NK", "NT", "TN", "ZZ"]);

export function ninoPrefixValid(prefix: string): boolean {
  return !NINO_INVALID_PREFIXES.has(prefix);
}

/**
 * German tax identification number (Steuer-IdNr): 11 digits, no leading zero, in the first ten
 * exactly one digit repeated (twice or thrice), check digit by ISO 7064 MOD 11,10.
 */
export function germanTaxIdValid(digits: string): boolean {
  if (!/^[1-9]\d{10}$/.test(digits)) return false;
  const counts = new Map<string, number>();
  for (const digit of digits.slice(0, 10)) counts.set(digit, (counts.get(digit) ?? 0) + 1);
  const repeated = [...counts.values()].filter((count) => count > 1);
  if (repeated.length !== 1 || repeated[0]! > 3) return false;
  let product = 10;
  for (let index = 0; index < 10; index++) {
    let sum = (digits.charCodeAt(index) - 48 + product) % 10;
    if (sum === 0) sum = 10;
    product = (sum * 2) % 11;
  }
  const check = (11 - product) % 10;
  return check === digits.charCodeAt(10) - 48;
}

/** North American Numbering Plan: area and exchange start 2-9 and are not N11; area middle digit not 9. */
export function nanpValid(area: string, exchange: string): boolean {
  const n11 = (code: string) => code[1] === "1" && code[2] === "1";
  return !n11(area) && !n11(exchange) && area[1] !== "9";
}
