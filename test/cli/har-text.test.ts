import { describe, expect, it } from "vitest";
import { buildHar, buildHarInTurns, harText, harTextInTurns } from "../../src/cli/har/har.js";
import { escapeLine } from "../../src/log/escape-line.js";
import type { LogRecord } from "../../src/saved-logs/filters.js";
import { twoSessionFiles } from "../ui/fixtures/two-sessions.js";

const { a, b } = twoSessionFiles();
const records = [...a, ...b].map((l) => JSON.parse(l) as LogRecord);

describe("HAR built and written in turns (the UI's download)", () => {
  it("is the HAR and the text `export --har` writes, to the byte", async () => {
    // A comment holding the entries' stand-in and a bidi control: neither may confuse the pieces.
    const opts = { creator: { name: "mcp-wiretap", version: "0" }, comment: 'filter: "mcp-wiretap:entries" \u202e' };
    const har = buildHar(records, opts);
    expect(har.log.entries.length).toBeGreaterThan(40);
    expect(await buildHarInTurns(records, opts)).toEqual(har);
    const whole = escapeLine(JSON.stringify(har, null, 2)) + "\n";
    expect(harText(har)).toBe(whole);
    expect(await harTextInTurns(har)).toBe(whole);
    const none = buildHar([], opts);
    expect(harText(none)).toBe(escapeLine(JSON.stringify(none, null, 2)) + "\n");
  });
});
