/**
 * A stdio line's JSON values are counted as one HTTP body's are (MAX_JSON_VALUES, member names included),
 * all of the line together: a line of several values one after another (`{…}{…}`, or values between CRs that
 * some readers split the line at), each under the bound, was read value by value, 693,000 members in 7.5 MB
 * holding the loop for a second in one piece where one value that large is refused before it is parsed.
 */
import { describe, expect, it } from "vitest";
import { MAX_JSON_VALUES } from "../../src/body/limits.js";
import { readLine } from "../../src/stdio/read-line.js";

const MEMBERS = 60_000;
const message = (id: number): string =>
  `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"echo","arguments":{${Array.from({ length: MEMBERS }, (_, i) => `"k${i}":1`).join(",")}}}}`;

describe(`a stdio line whose values together hold more than ${MAX_JSON_VALUES} values`, () => {
  const values = [1, 2, 3].map(message);
  for (const [name, separator] of [["one after another", ""], ["between CRs", "\r"], ["between U+2028", "\u2028"]] as const) {
    it(`is not read (${name}): no message, a problem that says why`, () => {
      const reading = readLine(Buffer.from(values.join(separator)));
      expect(reading.values).toEqual([]);
      expect(reading.hidden).toEqual([]);
      expect(reading.problem).toMatch(/more than 200000 JSON values/);
    });
  }

  it("a line of one such value under the bound is still read", () => {
    const reading = readLine(Buffer.from(values[0]!));
    expect(reading.values).toHaveLength(1);
    expect(reading.problem).toBeUndefined();
  });
});
