import { describe, expect, it } from "vitest";
import { piiDetector } from "../../src/detectors/index.js";
import { cardBrand, germanTaxIdValid, ibanValid, luhnValid } from "../../src/detectors/pii-validators.js";

const findingsIn = (text: string) => piiDetector.scan({ text });
const typesIn = (text: string) => findingsIn(text).map((finding) => finding.type);

/** Appends the Luhn check digit to a partial number. */
function withLuhnDigit(partial: string): string {
  for (let digit = 0; digit <= 9; digit++) if (luhnValid(partial + digit)) return partial + digit;
  throw new Error("unreachable");
}

const LUHN_VALID_CARDS: Array<[string, string]> = [
  ["4111111111111111", "visa"],
  ["4012888888881881", "visa"],
  ["4222222222222", "visa"],
  ["5555555555554444", "mastercard"],
  ["5105105105105100", "mastercard"],
  ["2223003122003222", "mastercard"],
  ["378282246310005", "amex"],
  ["371449635398431", "amex"],
  ["6011111111111117", "discover"],
  ["6011000990139424", "discover"],
  ["30569309025904", "diners"],
  ["3530111333300000", "jcb"],
  ["3566002020360505", "jcb"],
  ["6200000000000005", "unionpay"],
];

/** How cards of each length are embossed: 4-3-3-3, 4-6-4, 4-6-5, 4-4-4-4. */
const PRINTED_GROUPS: Record<number, Array<[number, number]>> = {
  13: [[0, 4], [4, 7], [7, 10], [10, 13]],
  14: [[0, 4], [4, 10], [10, 14]],
  15: [[0, 4], [4, 10], [10, 15]],
  16: [[0, 4], [4, 8], [8, 12], [12, 16]],
};

describe("pii: card numbers", () => {
  for (const [number, brand] of LUHN_VALID_CARDS) {
    it(`finds Luhn-valid ${brand} ${number} plain, spaced and dashed, without echoing it`, () => {
      const grouped = PRINTED_GROUPS[number.length]!.map(([from, to]) => number.slice(from, to));
      for (const text of [number, grouped.join(" "), grouped.join("-")]) {
        const findings = findingsIn(`card: ${text}, exp 12/29`);
        expect(findings).toEqual([expect.objectContaining({ type: "card_number", detail: expect.stringContaining(brand) })]);
        expect(JSON.stringify(findings)).not.toContain(number.slice(0, 12));
        expect(JSON.stringify(findings)).not.toContain(text);
      }
    });
  }

  it("does not take a bare 13-digit clock value for a card, though it passes Luhn with a Visa prefix", () => {
    const clock = "4222222222222";
    expect(luhnValid(clock)).toBe(true);
    expect(piiDetector.scan({ sentNs: clock, text: `event at ${clock} ns` })).toEqual([]);
    expect(typesIn(`visa ${clock}`)).toEqual(["card_number"]);
  });

  it("finds a card number given as a JSON number", () => {
    expect(piiDetector.scan({ card: 4111111111111111 })).toEqual([expect.objectContaining({ type: "card_number", path: "/card" })]);
  });

  const luhnInvalid = LUHN_VALID_CARDS.map(([number]) => number.slice(0, -1) + ((Number(number.at(-1)) + 1) % 10));
  it.each(luhnInvalid)("ignores Luhn-invalid %s", (number) => {
    expect(luhnValid(number)).toBe(false);
    expect(typesIn(`card: ${number}`)).toEqual([]);
  });

  it("ignores Luhn-valid numbers outside every issuer range or of the wrong length", () => {
    const noIssuer = [withLuhnDigit("123456789012345"), withLuhnDigit("999999999999999"), withLuhnDigit("700000000000000")];
    const wrongLength = [withLuhnDigit("41111111111111"), withLuhnDigit("3782822463100")]; // 15-digit Visa, 14-digit Amex
    for (const number of [...noIssuer, ...wrongLength]) {
      expect(luhnValid(number)).toBe(true);
      expect(cardBrand(number)).toBeNull();
      expect(typesIn(`id ${number}`)).toEqual([]);
    }
  });

  it("ignores digits inside decimals, longer numbers, identifiers and odd groupings", () => {
    for (const text of [
      "random 0.4111111111111111",
      "id 94111111111111111",
      "order ID4111111111111111",
      "4111 1111 1111 1111 1111 1111",
      "41 11 11 11 11 11 11 11",
      "4111-1111 1111-1111",
      "timestamp 1712345678901",
    ]) {
      expect(typesIn(text)).toEqual([]);
    }
  });
});

describe("pii: IBAN", () => {
  it.each(["DE89370400440532013000", "GB82WEST12345698765432", "FR1420041010050500013M02606", "NL91ABNA0417164300", "DE89 3704 0044 0532 0130 00"])(
    "finds %s",
    (iban) => {
      const findings = findingsIn(`pay to ${iban} by Friday`);
      expect(findings).toEqual([expect.objectContaining({ type: "iban" })]);
      expect(JSON.stringify(findings)).not.toContain(iban.replace(/ /g, "").slice(4));
    },
  );

  it.each(["DE89370400440532013001", "XX89370400440532013000", "DE8937040044053201300", "GB82 WEST 1234 5698 7654 33"])("ignores invalid %s", (iban) => {
    expect(ibanValid(iban.replace(/ /g, ""))).toBe(false);
    expect(typesIn(`pay to ${iban}`)).toEqual([]);
  });
});

describe("pii: e-mail addresses", () => {
  it("finds addresses and shows only the domain", () => {
    const findings = findingsIn("Contact jane.doe+billing@acme-corp.io or ops@mail.example.co.uk today.");
    expect(findings).toEqual([{ detector: "pii", type: "email", path: "/text", detail: "…@acme-corp.io (+1 more)" }]);
    expect(JSON.stringify(findings)).not.toContain("jane.doe");
  });

  it.each([
    "write to user@example.com or admin@test.example",
    "assets: logo@2x.png, icon@3x.webp",
    "git clone git@github.com:owner/repo.git",
    "npm i lodash@4.17.21 and @scope/pkg@latest",
    "ping @channel and @here",
    "a..b@domain.com is not valid",
  ])("ignores %s", (text) => expect(typesIn(text)).toEqual([]));
});

describe("pii: phone numbers", () => {
  it.each([
    "+1 415 555 2671",
    "+14155552671",
    "+44 20 7946 0958",
    "+49 (0)30 1234567",
    "+33 6 12 34 56 78",
    "(415) 555-2671",
    "415-555-2671",
    "415.555.2671",
    "020 7946 0958",
    "07700 900123",
    "06 12 34 56 78",
  ])("finds %s", (phone) => {
    const findings = findingsIn(`call ${phone} after 5pm`);
    expect(findings).toEqual([expect.objectContaining({ type: "phone_number" })]);
    expect(JSON.stringify(findings)).not.toContain(phone);
  });

  it.each([
    "12345678901234",
    "4155552671",
    "1+2345678",
    "released 2024-01-15 at 2024-06-01T12:00:00+02:00",
    "version 1.2.3.4 and 10.0.0.1",
    "+5% growth, +1 vote",
    "call 555-1234",
    "123-456-7890",
    "415-555-26710",
    "+1-2-3-4-5-6-7-8",
    "page 020 of 7946",
  ])("ignores %s", (text) => expect(typesIn(text)).toEqual([]));
});

describe("pii: national identifiers", () => {
  it("finds valid US SSNs and ignores the impossible ones", () => {
    expect(typesIn("SSN 123-45-6789")).toEqual(["us_ssn"]);
    for (const ssn of ["000-12-3456", "666-12-3456", "900-12-3456", "123-00-4567", "123-45-0000", "078-05-1120"]) {
      expect(typesIn(`SSN ${ssn}`)).toEqual([]);
    }
    expect(typesIn("123456789")).toEqual([]);
    expect(piiDetector.scan({ ssn: "123456789" })).toEqual([expect.objectContaining({ type: "us_ssn", path: "/ssn" })]);
  });

  it("finds UK National Insurance numbers with valid prefixes", () => {
    expect(typesIn("NI AB 12 34 56 C")).toEqual(["uk_national_insurance_number"]);
    expect(typesIn("NI AB123456C")).toEqual(["uk_national_insurance_number"]);
    for (const nino of ["QQ123456C", "BG123456A", "AB123456E", "AB12 3456C"]) expect(typesIn(`NI ${nino}`)).toEqual([]);
  });

  it("finds German tax ids only with a check digit and a name that says what they are", () => {
    expect(germanTaxIdValid("86095742719")).toBe(true);
    expect(typesIn("Steuer-ID: 86 095 742 719")).toEqual(["german_tax_id"]);
    expect(piiDetector.scan({ steuerId: "65929970489" })[0]?.type).toBe("german_tax_id");
    expect(typesIn("Steuer-ID: 86095742718")).toEqual([]);
    expect(typesIn("invoice 86095742719")).toEqual([]);
  });
});
