/**
 * verify-log's verdict, branch by branch: each test builds a log (and, where it matters, an audit state) the
 * way the proxy writes them, changes one thing an attacker or an accident would, and checks the one problem
 * or note the report must give for it.
 */
import { randomBytes } from "node:crypto";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { AuditChain, GENESIS_HASH, deriveAuditKeys, lineHash, type AuditKeys, type ChainPosition } from "../../src/log/audit-chain.js";
import type { StateRead } from "../../src/log/audit-state.js";
import { verifyChain } from "../../src/log/audit-verify.js";

const keys = deriveAuditKeys(randomBytes(32));
const LOG = path.resolve("audit-verify-test.ndjson");

/** Lines as the proxy writes them: numbered, chained and sealed, continuing from `from` when given. */
function chainOf(records: object[], from: ChainPosition | null = null, with_: AuditKeys = keys): string[] {
  const lines: string[] = [];
  const chain = new AuditChain({ write: (s: string) => lines.push(s) }, with_, from);
  for (const r of records) chain.write(`${JSON.stringify(r)}\n`);
  return lines.join("").trimEnd().split("\n");
}

const records = (n: number) => Array.from({ length: n }, (_, i) => ({ level: "info", event: i === n - 1 ? "stop" : "rpc", n: i }));
const text = (lines: string[]) => `${lines.join("\n")}\n`;
/** What the proxy's checkpoint says after it wrote line `index` of `lines` to `log`. */
const checkpoint = (lines: string[], index: number, log = LOG): StateRead => ({ file: "state", state: { log, seq: index, hash: lineHash(lines[index]!), updated: "2026-11-28T00:00:00.000Z" } });

function verify(lines: string[], state?: StateRead, name = LOG) {
  return verifyChain([{ name, text: text(lines) }], { keys, ...(state !== undefined ? { stateLookup: () => state } : {}) });
}

describe("the end of the log against its audit state", () => {
  it("matched: the last record is the one the state names", () => {
    const lines = chainOf(records(4));
    expect(verify(lines, checkpoint(lines, 3))).toEqual({
      records: 4,
      problems: [],
      endedCleanly: true,
      authenticated: true,
      state: "matched",
      last: { file: LOG, line: 4, seq: 3 },
      notes: [],
    });
  });

  it("the last record replaced with one that chains and carries a valid MAC: only the state can tell, and does", () => {
    const lines = chainOf(records(4));
    const before = { seq: 2, hash: lineHash(lines[2]!) };
    // Same seq, same prevHash, sealed with the key: every per-record check passes.
    const [replacement] = chainOf([{ level: "info", event: "stop", forged: true }], before);
    const replaced = [...lines.slice(0, 3), replacement!];
    expect(verify(replaced).problems).toEqual([]);
    const report = verify(replaced, checkpoint(lines, 3));
    expect(report.state).toBe("differs");
    expect(report.problems).toEqual([{ file: LOG, line: 4, seq: 3, problem: "the last record (seq 3) is not the one the audit state names: it was replaced" }]);
  });

  it("behind: records after the state's last checkpoint (the proxy stopped abruptly) are a note, not a problem", () => {
    const lines = chainOf(records(6));
    const report = verify(lines, checkpoint(lines, 3));
    expect(report.problems).toEqual([]);
    expect(report.state).toBe("behind");
    expect(report.notes).toEqual(["2 record(s) after the audit state's last checkpoint (seq 3): written just before the proxy stopped abruptly"]);
  });

  it("behind, with the record the state names replaced: the next record's prevHash catches it", () => {
    // The chain links every later record to it: a replaced record there breaks the next prevHash instead.
    const lines = chainOf(records(6));
    const [other] = chainOf([{ level: "info", event: "rpc", forged: true }], { seq: 2, hash: lineHash(lines[2]!) });
    const report = verify([...lines.slice(0, 3), other!, ...lines.slice(4)], checkpoint(lines, 3));
    expect(report.problems).toEqual([{ file: LOG, line: 4, seq: 3, problem: "record was edited (its hash does not match the next record's prevHash)" }]);
  });

  it("truncated: the log ends before the record the state names", () => {
    const lines = chainOf(records(6));
    const report = verify(lines.slice(0, 2), checkpoint(lines, 5));
    expect(report.state).toBe("differs");
    expect(report.problems).toEqual([{ file: LOG, line: 2, seq: 1, problem: "truncated after seq 1: the audit state says the chain reached seq 5" }]);
  });

  it("emptied: a log with no records left, and a state that says records were written", () => {
    const lines = chainOf(records(3));
    const report = verifyChain([{ name: LOG, text: "" }], { keys, stateLookup: () => checkpoint(lines, 2) });
    expect(report).toMatchObject({ records: 0, state: "differs", last: null });
    expect(report.problems).toEqual([{ file: LOG, line: 0, seq: null, problem: "the log has no records: the audit state says the chain reached seq 2" }]);
  });

  it("a state that names another file: the newest file was not given", () => {
    const lines = chainOf(records(3));
    const report = verify(lines, checkpoint(lines, 2, "/elsewhere/log.ndjson"));
    expect(report.state).toBe("differs");
    expect(report.problems).toEqual([{ file: LOG, line: 3, seq: 2, problem: "missing file: the audit state says the chain goes on to seq 2 in /elsewhere/log.ndjson, which was not given (give it last)" }]);
  });

  it("a rotated file given alone finds the state of the log it was rotated from, which says the chain goes on", () => {
    const lines = chainOf(records(5));
    const asked: string[] = [];
    const report = verifyChain([{ name: `${LOG}.1`, text: text(lines.slice(0, 3)) }], {
      keys,
      stateLookup: (log) => {
        asked.push(log);
        return log === LOG ? checkpoint(lines, 4) : null;
      },
    });
    expect(asked).toEqual([`${LOG}.1`, LOG]);
    expect(report.problems).toEqual([{ file: `${LOG}.1`, line: 3, seq: 2, problem: `missing file: the audit state says the chain goes on to seq 4 in ${LOG}, which was not given (give it last)` }]);
  });

  it("a state that cannot be trusted is a problem, never a verdict", () => {
    const lines = chainOf(records(3));
    const report = verify(lines, { file: "/audit/x.state", problem: "the audit state /audit/x.state does not match its MAC (edited, or written with another key)." });
    expect(report.state).toBe("differs");
    expect(report.problems).toEqual([{ file: "/audit/x.state", line: 1, seq: null, problem: "the audit state /audit/x.state does not match its MAC (edited, or written with another key): it cannot say where the log ends" }]);
  });

  it("no state: a note that the end could not be checked; without a key or a lookup, not even looked for", () => {
    const lines = chainOf(records(3));
    const report = verify(lines, null);
    expect(report).toMatchObject({ problems: [], state: "none" });
    expect(report.notes).toEqual([`no audit state for ${LOG}: whether records were cut from the end could not be checked`]);
    // Without a lookup (a log written to stdout) the end cannot be checked either, and that is said too.
    expect(verify(lines)).toMatchObject({ state: "none", notes: [`no audit state for ${LOG}: whether records were cut from the end could not be checked`] });
    let looked = false;
    const unkeyed = verifyChain([{ name: LOG, text: text(lines) }], { keys: null, stateLookup: () => ((looked = true), checkpoint(lines, 0)) });
    expect(unkeyed).toMatchObject({ problems: [], state: "none", authenticated: false });
    expect(looked).toBe(false);
  });
});

describe("the chain and the MAC of each record", () => {
  it("a record without seq/prevHash (written without --audit-chain, or edited)", () => {
    const lines = chainOf(records(3));
    const report = verifyChain([{ name: LOG, text: text([lines[0]!, '{"level":"info","event":"rpc"}', ...lines.slice(1)]) }], { keys: null });
    expect(report.problems.map((p) => [p.line, p.problem])).toEqual([
      [2, "record has no seq/prevHash (written without --audit-chain, or edited)"],
      [2, "record was edited (its hash does not match the next record's prevHash)"],
    ]);
    // A seq alone does not make a link: the prevHash is what ties a record to the one before.
    const unlinked = lines[1]!.replace(/,"prevHash":"[^"]*"/, "");
    const noLink = verifyChain([{ name: LOG, text: text([lines[0]!, unlinked, lines[2]!]) }], { keys: null });
    expect(noLink.problems.map((p) => [p.line, p.problem])).toEqual([
      [2, "record has no seq/prevHash (written without --audit-chain, or edited)"],
      [2, "record was edited (its hash does not match the next record's prevHash)"],
    ]);
  });

  it("a first record with seq 0 that does not link to the genesis hash", () => {
    const lines = chainOf(records(2));
    const first = lines[0]!.replace(GENESIS_HASH, lineHash("something else"));
    const report = verifyChain([{ name: LOG, text: text([first, ...lines.slice(1)]) }], { keys: null });
    expect(report.problems).toEqual([
      { file: LOG, line: 1, seq: 0, problem: "first record does not start the chain" },
      { file: LOG, line: 1, seq: 0, problem: "record was edited (its hash does not match the next record's prevHash)" },
    ]);
  });

  it("a chain that starts after seq 0: an earlier file is missing", () => {
    const lines = chainOf(records(5));
    expect(verify(lines.slice(3)).problems).toEqual([{ file: LOG, line: 1, seq: 3, problem: "chain starts at seq 3: records 0-2 are in an earlier file (give it first), or were rotated away or deleted" }]);
  });

  it("a line cut short counts as a record's place: the next record is not reported as removed", () => {
    const lines = chainOf(records(4));
    lines[1] = lines[1]!.slice(0, 30);
    expect(verify(lines).problems).toEqual([
      { file: LOG, line: 2, seq: null, problem: "not a JSON record (edited or cut short)" },
      { file: LOG, line: 2, seq: 1, problem: "record was edited (its hash does not match the next record's prevHash)" },
    ]);
  });

  it("with a key: a record without a MAC is forged", () => {
    const lines = chainOf(records(3));
    lines[1] = lines[1]!.replace(/,"mac":"[^"]*"\}$/, "}");
    const report = verify(lines);
    expect(report.problems).toContainEqual({ file: LOG, line: 2, seq: 1, problem: "forged or edited: the record carries no MAC (every record of a keyed chain does)" });
  });

  it("with a key: a MAC one character off is forged (the comparison reads every character)", () => {
    const lines = chainOf(records(3));
    const mac = /"mac":"hmac-sha256:([0-9a-f]+)"/.exec(lines[2]!)![1]!;
    const last = mac.at(-1) === "0" ? "1" : "0";
    lines[2] = lines[2]!.replace(mac, `${mac.slice(0, -1)}${last}`);
    expect(verify(lines).problems).toEqual([{ file: LOG, line: 3, seq: 2, problem: "forged or edited: its MAC does not match (the proxy did not write this record with this key)" }]);
  });

  it("a log written with no key at all: a note, not authenticated, and no MAC problem per line", () => {
    const lines = chainOf(records(3)).map((l) => l.replace(/,"mac":"[^"]*"\}$/, "}"));
    // The hashes are of the lines as they are now: rebuild the links as an unkeyed writer would have.
    for (let i = 1; i < lines.length; i++) lines[i] = lines[i]!.replace(/"prevHash":"[^"]*"/, `"prevHash":"${lineHash(lines[i - 1]!)}"`);
    const report = verify(lines);
    expect(report).toMatchObject({ problems: [], authenticated: false });
    expect(report.notes).toEqual([
      "no record carries a MAC (written without a key, by an older version): only the unkeyed hashes were checked",
      `no audit state for ${LOG}: whether records were cut from the end could not be checked`,
    ]);
  });

  it("problems of several files are listed in the order the files were given, then by line", () => {
    const lines = chainOf(records(6));
    const older = lines.slice(0, 3);
    const newer = lines.slice(3);
    older[2] = older[2]!.replace('"n":2', '"n":20');
    newer[1] = newer[1]!.replace('"n":4', '"n":40');
    const report = verifyChain([{ name: "log.1", text: text(older) }, { name: "log", text: text(newer) }], { keys });
    // An edited last record of a file is reported in that file, where it is (not at line 0 of the next one).
    expect(report.problems.map((p) => `${p.file}:${p.line}`)).toEqual(["log.1:3", "log.1:3", "log:2", "log:2"]);
    expect(report.last).toEqual({ file: "log", line: 3, seq: 5 });
  });

  it("ended cleanly only when the last record is a stop", () => {
    const lines = chainOf(records(3));
    expect(verify(lines).endedCleanly).toBe(true);
    expect(verify(lines.slice(0, 2)).endedCleanly).toBe(false);
  });
});
