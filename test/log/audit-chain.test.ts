import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { AuditChain, GENESIS_HASH, deriveAuditKeys, lineHash, type AuditKeys } from "../../src/log/audit-chain.js";
import { readAuditKey, readChainState, statePathFor } from "../../src/log/audit-state.js";
import { findStateOfChain } from "../../src/log/audit-state-lookup.js";
import { verifyChain } from "../../src/log/audit-verify.js";
import { createLogSink } from "../../src/log/logger.js";

const keys = deriveAuditKeys(randomBytes(32));

function chainOf(records: object[], with_: AuditKeys = keys): string[] {
  const lines: string[] = [];
  const chain = new AuditChain({ write: (s: string) => lines.push(s) }, with_);
  for (const r of records) chain.write(`${JSON.stringify(r)}\n`);
  return lines.join("").trimEnd().split("\n");
}

const sample = () => chainOf([{ event: "start" }, { event: "rpc", id: 1 }, { event: "rpc", id: 2 }, { event: "rpc", id: 3 }, { event: "stop" }]);
const text = (lines: string[]) => `${lines.join("\n")}\n`;
const verify = (lines: string[], k: AuditKeys | null = keys) => verifyChain([{ name: "log", text: text(lines) }], { keys: k });

/** What someone without the key can do: a record with the right seq and prevHash, sealed with a guess. */
function forgedAfter(previousLine: string, seq: number, record: object): string {
  const unsealed = `${JSON.stringify(record).slice(0, -1)},"seq":${seq},"prevHash":"${lineHash(previousLine)}"}`;
  return `${unsealed.slice(0, -1)},"mac":"hmac-sha256:${randomBytes(32).toString("hex")}"}`;
}

describe("audit chain", () => {
  it("numbers every record, links it to the hash of the line before and seals it with the key", () => {
    const lines = sample();
    const parsed = lines.map((l) => JSON.parse(l) as { seq: number; prevHash: string; mac: string });
    expect(parsed.map((r) => r.seq)).toEqual([0, 1, 2, 3, 4]);
    expect(parsed[0]!.prevHash).toBe(GENESIS_HASH);
    expect(new Set(parsed.map((r) => r.prevHash)).size).toBe(5);
    for (const r of parsed) expect(r.mac).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
    expect(lines[0]).toMatch(/,"seq":0,"prevHash":"sha256:0{64}","mac":"hmac-sha256:[0-9a-f]{64}"\}$/);
    expect(verify(lines)).toMatchObject({ records: 5, problems: [], endedCleanly: true, authenticated: true });
  });

  it("the forged-stop attack: cut after a record, append a stop with the right seq and prevHash: found at its line", () => {
    const lines = sample().slice(0, 3);
    lines.push(forgedAfter(lines[2]!, 3, { level: "info", event: "stop", reason: "SIGTERM" }));
    const report = verify(lines);
    expect(report.problems).toEqual([{ file: "log", line: 4, seq: 3, problem: expect.stringMatching(/^forged or edited: its MAC does not match/) }]);
    // Without the key only the hashes can be checked, and they are consistent: the report must say so.
    const unkeyed = verify(lines, null);
    expect(unkeyed).toMatchObject({ problems: [], authenticated: false, endedCleanly: true });
  });

  it("an edited record, with every later prevHash recomputed, is still caught by its MAC", () => {
    const lines = sample();
    lines[2] = lines[2]!.replace('"id":2', '"id":22');
    for (let i = 3; i < lines.length; i++) {
      const record = JSON.parse(lines[i]!) as Record<string, unknown>;
      record.prevHash = lineHash(lines[i - 1]!);
      lines[i] = JSON.stringify(record);
    }
    const report = verify(lines);
    expect(report.problems[0]).toMatchObject({ line: 3, seq: 2, problem: expect.stringContaining("forged or edited") });
  });

  it("finds an edited record and says which line", () => {
    const lines = sample();
    lines[2] = lines[2]!.replace('"id":2', '"id":22');
    const report = verify(lines, null);
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
    expect(report.problems.some((p) => p.problem.includes("out of order"))).toBe(true);
  });

  it("says when the log has no stop record and when a line is not JSON", () => {
    expect(verify(sample().slice(0, 3))).toMatchObject({ problems: [], endedCleanly: false });
    const broken = sample();
    broken[1] = broken[1]!.slice(0, 20);
    expect(verify(broken).problems[0]).toMatchObject({ line: 2, problem: expect.stringContaining("not a JSON record") });
  });

  it("with another key, says once that no record matches it instead of flagging every line", () => {
    const report = verify(sample(), deriveAuditKeys(randomBytes(32)));
    expect(report.problems).toEqual([{ file: "log", line: 1, seq: 0, problem: expect.stringMatching(/none of the 5 records carries a valid MAC for this key/) }]);
  });

  it("follows the chain across rotated files given oldest first", () => {
    const lines = sample();
    const report = verifyChain(
      [
        { name: "log.1", text: text(lines.slice(0, 2)) },
        { name: "log", text: text(lines.slice(2)) },
      ],
      { keys },
    );
    expect(report.problems).toEqual([]);
    const alone = verifyChain([{ name: "log", text: text(lines.slice(2)) }], { keys });
    expect(alone.problems[0]!.problem).toContain("earlier file");
  });
});

describe("audit chain written by the log sink, with its key and state beside the CA", () => {
  let dir: string;
  afterEach(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function run(file: string, auditDir: string, records: number, opts: { maxSize?: number; keep?: number } = {}): Promise<void> {
    const sink = createLogSink({ file, auditChain: { dir: auditDir }, ...opts });
    for (let i = 0; i < records; i++) {
      sink.logger.info({ event: "rpc", n: i, pad: "x".repeat(60) });
      if (i % 10 === 9) await new Promise((resolve) => setTimeout(resolve, 2));
    }
    sink.logger.info({ event: "stop" });
    await sink.flush();
  }

  async function verifyFiles(files: string[], auditDir: string) {
    const k = readAuditKey(auditDir);
    const texts = await Promise.all(files.map(async (name) => ({ name, text: await readFile(name, "utf8") })));
    return verifyChain(texts, { keys: k, stateLookup: (log) => (k ? readChainState(statePathFor(auditDir, log), k) : null) });
  }

  it("creates the key and the state 0600 in a 0700 folder; an untouched log verifies, also across restarts and rotation", async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-audit-"));
    const auditDir = path.join(dir, "ca", "audit");
    const file = path.join(dir, "log.ndjson");
    await run(file, auditDir, 5);
    await run(file, auditDir, 5); // a restart on the same file continues the chain
    expect((await stat(auditDir)).mode & 0o777).toBe(0o700);
    for (const name of await readdir(auditDir)) expect((await stat(path.join(auditDir, name))).mode & 0o777).toBe(0o600);
    const once = await verifyFiles([file], auditDir);
    expect(once).toMatchObject({ records: 12, problems: [], authenticated: true, endedCleanly: true, state: "matched" });

    const rotated = path.join(dir, "rotated.ndjson");
    await run(rotated, auditDir, 60, { maxSize: 5_000, keep: 9 });
    const files = (await readdir(dir)).filter((n) => n.startsWith("rotated.ndjson")).sort().reverse().map((n) => path.join(dir, n));
    expect(files.length).toBeGreaterThan(2);
    expect(await verifyFiles(files, auditDir)).toMatchObject({ records: 61, problems: [], authenticated: true, state: "matched" });
    // Without the newest file, the state says where the chain goes on.
    const older = await verifyFiles(files.slice(0, -1), auditDir);
    expect(older.problems.at(-1)!.problem).toMatch(new RegExp(`missing file: the audit state says the chain goes on to seq 60 in ${rotated.replace(/[.]/g, "[.]")}`));
  });

  it("a restart after records were written but not yet checkpointed (the proxy killed in between) goes on after them", async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-audit-"));
    const auditDir = path.join(dir, "audit");
    const file = path.join(dir, "log.ndjson");
    await run(file, auditDir, 3);
    const k = readAuditKey(auditDir)!;
    const read = readChainState(statePathFor(auditDir, file), k);
    expect(read && "state" in read ? read.state.seq : null).toBe(3);
    const unsaved: string[] = [];
    const chain = new AuditChain({ write: (line: string) => unsaved.push(line) }, k, read && "state" in read ? read.state : null);
    for (let i = 0; i < 3; i++) chain.write(`${JSON.stringify({ level: "info", event: "rpc", unsaved: i })}\n`);
    await writeFile(file, unsaved.join(""), { flag: "a" });
    await run(file, auditDir, 2);
    const report = await verifyFiles([file], auditDir);
    expect(report).toMatchObject({ records: 10, problems: [], state: "matched", authenticated: true });
  });

  it("truncation: a log cut after a record is caught by the state, with or without a forged stop after it", async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-audit-"));
    const auditDir = path.join(dir, "audit");
    const file = path.join(dir, "log.ndjson");
    await run(file, auditDir, 8);
    const lines = (await readFile(file, "utf8")).trimEnd().split("\n");
    await writeFile(file, text(lines.slice(0, 4)));
    const cut = await verifyFiles([file], auditDir);
    expect(cut.problems).toEqual([{ file, line: 4, seq: 3, problem: "truncated after seq 3: the audit state says the chain reached seq 8" }]);

    await writeFile(file, text([...lines.slice(0, 4), forgedAfter(lines[3]!, 4, { level: "info", event: "stop" })]));
    const forged = await verifyFiles([file], auditDir);
    expect(forged.problems.map((p) => p.problem)).toEqual([expect.stringMatching(/^forged or edited/), "truncated after seq 4: the audit state says the chain reached seq 8"]);
  });

  it("a renamed copy finds its state by the chain's identity, kept across restarts and rotation", async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-audit-"));
    const auditDir = path.join(dir, "audit");
    const file = path.join(dir, "log.ndjson");
    await run(file, auditDir, 3);
    await run(file, auditDir, 3);
    const k = readAuditKey(auditDir)!;
    const byIdentity = async (files: string[]) => {
      const texts = await Promise.all(files.map(async (name) => ({ name, text: await readFile(name, "utf8") })));
      return verifyChain(texts, { keys: k, stateLookup: (log) => readChainState(statePathFor(auditDir, log), k), stateOfChain: (c) => findStateOfChain(auditDir, c, k) });
    };
    const moved = path.join(dir, "moved.ndjson");
    await writeFile(moved, await readFile(file));
    const report = await byIdentity([moved]);
    expect(report).toMatchObject({ problems: [], state: "matched" });
    expect(report.notes).toEqual([expect.stringMatching(/^audit state found by the chain's identity: .* \(written for .*log\.ndjson\)$/)]);

    await run(path.join(dir, "rotated.ndjson"), auditDir, 60, { maxSize: 5_000, keep: 9 });
    const files = (await readdir(dir)).filter((n) => n.startsWith("rotated.ndjson")).sort().reverse();
    const archived = await Promise.all(files.map(async (name, i) => {
      const to = path.join(dir, `archive-${String(i).padStart(2, "0")}.ndjson`);
      await writeFile(to, await readFile(path.join(dir, name)));
      return to;
    }));
    expect(await byIdentity(archived)).toMatchObject({ problems: [], state: "matched" });
    // The archive without its newest file: cut, as far as the state can tell, and it says where the chain went on.
    const older = await byIdentity(archived.slice(0, -1));
    expect(older.problems.at(-1)!.problem).toMatch(/the audit state says the chain reached seq 60 \(written as .*rotated\.ndjson: if files rotated after/);
  });

  it("an audit state edited by hand is reported, not trusted", async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-audit-"));
    const auditDir = path.join(dir, "audit");
    const file = path.join(dir, "log.ndjson");
    await run(file, auditDir, 3);
    const statePath = statePathFor(auditDir, file);
    await writeFile(statePath, (await readFile(statePath, "utf8")).replace(/"seq":\d+/, '"seq":1'), { mode: 0o600 });
    const report = await verifyFiles([file], auditDir);
    expect(report.problems).toEqual([expect.objectContaining({ problem: expect.stringMatching(/^the audit state .* does not match its MAC/) })]);
  });
});
