import { describe, expect, it } from "vitest";
import { AuditChain, GENESIS_HASH, verifyChain } from "../../src/log/audit-chain.js";

function chainOf(records: object[]): string[] {
  const lines: string[] = [];
  const chain = new AuditChain({ write: (s: string) => lines.push(s) });
  for (const r of records) chain.write(`${JSON.stringify(r)}\n`);
  return lines.join("").trimEnd().split("\n");
}

const sample = () => chainOf([{ event: "start" }, { event: "rpc", id: 1 }, { event: "rpc", id: 2 }, { event: "rpc", id: 3 }, { event: "stop" }]);
const verify = (lines: string[]) => verifyChain([{ name: "log", text: `${lines.join("\n")}\n` }]);

describe("audit chain", () => {
  it("numbers every record and links it to the hash of the line before", () => {
    const lines = sample();
    const parsed = lines.map((l) => JSON.parse(l) as { seq: number; prevHash: string });
    expect(parsed.map((r) => r.seq)).toEqual([0, 1, 2, 3, 4]);
    expect(parsed[0]!.prevHash).toBe(GENESIS_HASH);
    expect(new Set(parsed.map((r) => r.prevHash)).size).toBe(5);
    expect(verify(lines)).toEqual({ records: 5, problems: [], endedCleanly: true });
  });

  it("finds an edited record and says which line", () => {
    const lines = sample();
    lines[2] = lines[2]!.replace('"id":2', '"id":22');
    const report = verify(lines);
    expect(report.problems).toEqual([{ file: "log", line: 3, seq: 2, problem: expect.stringContaining("edited") }]);
  });

  it("finds a removed record", () => {
    const lines = sample();
    lines.splice(2, 1);
    const report = verify(lines);
    expect(report.problems).toHaveLength(1);
    expect(report.problems[0]).toMatchObject({ line: 3, seq: 3, problem: expect.stringContaining("1 record(s) removed") });
  });

  it("finds reordered records", () => {
    const lines = sample();
    [lines[1], lines[2]] = [lines[2]!, lines[1]!];
    const report = verify(lines);
    expect(report.problems.some((p) => /removed|out of order/.test(p.problem))).toBe(true);
    expect(report.problems.some((p) => p.problem.includes("out of order"))).toBe(true);
  });

  it("says when the log was cut short (no stop record) and when a line is not JSON", () => {
    const lines = sample().slice(0, 3);
    expect(verify(lines)).toMatchObject({ problems: [], endedCleanly: false });
    const broken = sample();
    broken[1] = broken[1]!.slice(0, 20);
    expect(verify(broken).problems[0]).toMatchObject({ line: 2, problem: expect.stringContaining("not a JSON record") });
  });

  it("follows the chain across rotated files given oldest first", () => {
    const lines = sample();
    const report = verifyChain([
      { name: "log.1", text: `${lines.slice(0, 2).join("\n")}\n` },
      { name: "log", text: `${lines.slice(2).join("\n")}\n` },
    ]);
    expect(report.problems).toEqual([]);
    const alone = verifyChain([{ name: "log", text: `${lines.slice(2).join("\n")}\n` }]);
    expect(alone.problems[0]!.problem).toContain("earlier file");
  });
});
