/** Reading an audit state back: each way it can be absent, untrusted or unknown gives its own answer. */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { deriveAuditKeys, seal } from "../../src/log/audit-chain.js";
import { ChainStateWriter, readChainState } from "../../src/log/audit-state.js";

const keys = deriveAuditKeys(randomBytes(32));
const HASH = `sha256:${"a".repeat(64)}`;
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-audit-state-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("readChainState", () => {
  it("reads what the writer saved (padded to a fixed size), and again after the next checkpoint", () => {
    const file = path.join(dir, "x.state");
    const writer = new ChainStateWriter(file, "/logs/log.ndjson", keys);
    writer.save({ seq: 41, hash: HASH });
    expect(readChainState(file, keys)).toEqual({ file, state: { log: "/logs/log.ndjson", seq: 41, hash: HASH, updated: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) } });
    writer.save({ seq: 7, hash: HASH });
    writer.close();
    expect(readChainState(file, keys)).toMatchObject({ state: { seq: 7 } });
  });

  it("no file, or an empty one: no state", async () => {
    expect(readChainState(path.join(dir, "none.state"), keys)).toBeNull();
    const empty = path.join(dir, "empty.state");
    await writeFile(empty, "   \n", { mode: 0o600 });
    expect(readChainState(empty, keys)).toBeNull();
  });

  it("sealed with the right key but of another version: not trusted, and says why", async () => {
    const file = path.join(dir, "v2.state");
    await writeFile(file, `${seal(JSON.stringify({ version: 2, log: "/l", seq: 1, hash: HASH }), keys.state)}\n`, { mode: 0o600 });
    expect(readChainState(file, keys)).toEqual({ file, problem: `the audit state ${file} is not in a format this version knows` });
  });

  it("sealed with the records' key instead of the state's: does not match its MAC", async () => {
    const file = path.join(dir, "swapped.state");
    await writeFile(file, `${seal(JSON.stringify({ version: 1, log: "/l", seq: 1, hash: HASH }), keys.records)}\n`, { mode: 0o600 });
    expect(readChainState(file, keys)).toEqual({ file, problem: expect.stringMatching(/does not match its MAC/) });
  });

  it.runIf(process.platform !== "win32")("a planted symbolic link is not followed: a problem, not a state", async () => {
    const real = path.join(dir, "real.state");
    const writer = new ChainStateWriter(real, "/l", keys);
    writer.save({ seq: 1, hash: HASH });
    writer.close();
    const link = path.join(dir, "link.state");
    await symlink(real, link);
    expect(readChainState(link, keys)).toEqual({ file: link, problem: expect.stringMatching(/symbolic link/) });
  });
});
