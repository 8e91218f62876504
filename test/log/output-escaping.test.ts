/**
 * Control, bidi and invisible characters a peer sends (a server name, a tool name, a header) reach the log
 * only as JSON escapes: each one parses back to the same string, and its raw form is never in the file's
 * bytes, whether pino writes the string itself (short top-level values) or through JSON.stringify (nested
 * and long ones). The audit chain still verifies over the escaped lines.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { verifyChain } from "../../src/log/audit-verify.js";
import { escapeLine, visibleText } from "../../src/log/escape-line.js";
import { createLogSink } from "../../src/log/logger.js";
import { UNSAFE_CHARS } from "../helpers/unsafe-chars.js";


const hex = (c: string): string => [...Array(c.length).keys()].map((i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, "0")}`).join("");

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), "mcp-wiretap-escape-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("log lines carry no raw control, bidi or invisible character", () => {
  it.each([false, true])("each one round-trips through the log file and is escaped in its bytes (audit chain %s)", async (auditChain) => {
    const file = path.join(dir, "log.ndjson");
    const sink = createLogSink({ file, ...(auditChain ? { auditChain: { dir: path.join(dir, "audit") } } : {}) });
    const values = UNSAFE_CHARS.map((c) => ({
      short: `a${c}b`,
      long: `${"x".repeat(150)}${c}y`,
      nested: { name: `tool${c}`, list: [c] },
    }));
    for (const v of values) sink.logger.info({ event: "test", ...v });
    await sink.flush();
    const bytes = readFileSync(file);
    const text = bytes.toString("utf8");
    // The UTF-8 decoder would turn a raw lone surrogate into U+FFFD: there must be none.
    expect(text).not.toContain("\ufffd");
    const lines = text.split("\n").filter(Boolean);
    expect(lines).toHaveLength(UNSAFE_CHARS.length);
    lines.forEach((line, i) => {
      const c = UNSAFE_CHARS[i]!;
      for (let k = 0; k < c.length; k++) expect(line, `U+${c.codePointAt(0)!.toString(16)}`).not.toContain(c[k]);
      expect(line).toContain(hex(c));
      const back = JSON.parse(line) as typeof values[number];
      expect(back.short).toBe(values[i]!.short);
      expect(back.long).toBe(values[i]!.long);
      expect(back.nested).toEqual(values[i]!.nested);
    });
    if (auditChain) expect(verifyChain([{ name: "log", text }], { keys: null }).problems).toEqual([]);
  });

  it("keeps lines without such characters byte for byte, and ordinary text (accents, CJK, emoji) raw", () => {
    const line = `${JSON.stringify({ event: "x", s: "héllo 世界 🙂 \"quoted\" \\ tab\there" })}\n`;
    expect(escapeLine(line)).toBe(line);
  });

  it("shows each one visibly in terminal text", () => {
    for (const c of UNSAFE_CHARS) {
      const shown = visibleText(`a${c}b`);
      for (let k = 0; k < c.length; k++) expect(shown).not.toContain(c[k]);
    }
    expect(visibleText("evil\u202Etxt.exe")).toBe("evil\\u202etxt.exe");
    expect(visibleText("a\tb\nc")).toBe("a b\\nc");
  });
});
