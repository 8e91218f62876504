import { createHash, randomBytes } from "node:crypto";
import { chmod, chown, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHttpsUpstream, type TestUpstream } from "../helpers/https-upstream.js";
import { ordinaryUser } from "../helpers/ordinary-user.js";
import { runCli, spawnCli, testCaFile } from "../helpers/proxy-harness.js";
import { waitUntil } from "../helpers/wait-until.js";

let dir: string;
let upstream: TestUpstream;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-audit-"));
  upstream = await startHttpsUpstream();
});
afterAll(async () => {
  await upstream?.close();
  await rm(dir, { recursive: true, force: true });
});

/** Starts the CLI proxy, waits for its banner, returns its URL and a stop function. */
async function startCli(args: string[]) {
  const cli = spawnCli(["start", "--port", "0", "--ca-dir", path.join(dir, "ca"), "--upstream-ca", testCaFile(), ...args]);
  const url = (await cli.waitForStderr(/listening on (http:\/\/\S+)/, 15_000))[1]!;
  const stop = async (): Promise<number | null> => {
    cli.child.kill("SIGTERM");
    return (await cli.exited).code;
  };
  return { url, stop, stderr: cli.stderr };
}

async function curlThrough(proxyUrl: string, target: string): Promise<{ code: number | null; out: string }> {
  const { execFile } = await import("node:child_process");
  return new Promise((resolve) => {
    // A refused CONNECT shows in %{http_connect}; an answered request in %{http_code}.
    const args = ["-sS", "-o", "/dev/null", "-w", "%{http_code} %{http_connect}", "-x", proxyUrl, "--cacert", path.join(dir, "ca", "ca.pem"), target];
    execFile("curl", args, (err, stdout) => {
      const [code, connect] = stdout.split(" ");
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: code === "000" ? (connect ?? "") : (code ?? "") });
    });
  });
}

/** A record with the right seq and prevHash, sealed with a guess: what someone without the audit key can append. */
function forgedAfter(previousLine: string, record: object): string {
  const seq = (JSON.parse(previousLine) as { seq: number }).seq + 1;
  const prevHash = `sha256:${createHash("sha256").update(previousLine).digest("hex")}`;
  return `${JSON.stringify(record).slice(0, -1)},"seq":${seq},"prevHash":"${prevHash}","mac":"hmac-sha256:${randomBytes(32).toString("hex")}"}`;
}

describe("--audit-chain and verify-log", () => {
  const caDir = () => path.join(dir, "ca");

  it("an untouched log verifies with the key (exit 0); without the key it says only unkeyed integrity was checked (exit 3)", async () => {
    const log = path.join(dir, "chained.ndjson");
    const proxy = await startCli(["--log-file", log, "--audit-chain"]);
    for (let i = 0; i < 3; i++) expect((await curlThrough(proxy.url, `${upstream.url}/bytes?n=100`)).out).toBe("200");
    expect(await proxy.stop()).toBe(0);
    for (const name of await readdir(path.join(caDir(), "audit"))) expect((await stat(path.join(caDir(), "audit", name))).mode & 0o777).toBe(0o600);
    const ok = await runCli(["verify-log", "--ca-dir", caDir(), log]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(/^ok: \d+ records, chain intact, every record authenticated with the audit key, ends where the audit state says \(seq \d+\), ended with a stop record\n$/);

    const unkeyed = await runCli(["verify-log", "--audit-dir", path.join(dir, "no-key-here"), log]);
    expect(unkeyed.code).toBe(3);
    expect(unkeyed.stdout).toMatch(/^UNVERIFIED: .*only the unkeyed integrity was checked \(no audit key at .*no-key-here\/audit\.key/);

    const missing = await runCli(["verify-log", "--ca-dir", caDir(), `${log}.nope`]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`missing file: cannot read ${log}.nope (ENOENT)`);
  });

  it("the forged-stop attack (cut after a record, append a stop with the right seq and prevHash) and a bare cut both fail (exit 1)", async () => {
    const log = path.join(dir, "attacked.ndjson");
    const proxy = await startCli(["--log-file", log, "--audit-chain"]);
    for (let i = 0; i < 3; i++) expect((await curlThrough(proxy.url, `${upstream.url}/bytes?n=100`)).out).toBe("200");
    expect(await proxy.stop()).toBe(0);
    const lines = (await readFile(log, "utf8")).trimEnd().split("\n");
    const keep = lines.findIndex((l) => l.includes('"event":"http"')) + 1;
    const kept = lines.slice(0, keep);

    await writeFile(log, `${[...kept, forgedAfter(kept.at(-1)!, { level: "info", time: new Date().toISOString(), event: "stop", reason: "SIGTERM" })].join("\n")}\n`);
    const forged = await runCli(["verify-log", "--ca-dir", caDir(), log]);
    expect(forged.code).toBe(1);
    expect(forged.stdout).toContain(`${log}:${keep + 1} (seq ${keep}): forged or edited: its MAC does not match`);
    expect(forged.stdout).toContain(`truncated after seq ${keep}: the audit state says the chain reached seq ${lines.length - 1}`);
    // Without the key the same forgery looks consistent: that is what exit 3 says.
    expect((await runCli(["verify-log", "--audit-dir", path.join(dir, "no-key-here"), log])).code).toBe(3);

    await writeFile(log, `${kept.join("\n")}\n`);
    const cut = await runCli(["verify-log", "--ca-dir", caDir(), log]);
    expect(cut.code).toBe(1);
    expect(cut.stdout).toContain(`${log}:${keep} (seq ${keep - 1}): truncated after seq ${keep - 1}: the audit state says the chain reached seq ${lines.length - 1}`);

    const edited = lines.slice();
    edited[keep - 1] = edited[keep - 1]!.replace(/"status":200/, '"status":404');
    await writeFile(log, `${edited.join("\n")}\n`);
    const bad = await runCli(["verify-log", "--ca-dir", caDir(), log]);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toContain(`${log}:${keep}`);
    expect(bad.stdout).toContain("edited");
  });

  it("a rotated log verifies across its files, and restarts on the same file continue the chain", async () => {
    const log = path.join(dir, "rotated.ndjson");
    for (let run = 0; run < 2; run++) {
      const proxy = await startCli(["--log-file", log, "--audit-chain", "--log-max-size", "3000", "--log-keep", "9"]);
      for (let i = 0; i < 6; i++) expect((await curlThrough(proxy.url, `${upstream.url}/bytes?n=100`)).out).toBe("200");
      expect(await proxy.stop()).toBe(0);
    }
    const files = (await readdir(dir)).filter((n) => n.startsWith("rotated.ndjson")).sort().reverse().map((n) => path.join(dir, n));
    expect(files.length).toBeGreaterThan(2);
    const ok = await runCli(["verify-log", "--ca-dir", caDir(), ...files]);
    expect(ok.stdout).toMatch(/^ok: \d+ records in \d+ files, chain intact, every record authenticated/);
    expect(ok.code).toBe(0);
    const withoutNewest = await runCli(["verify-log", "--ca-dir", caDir(), ...files.slice(0, -1)]);
    expect(withoutNewest.code).toBe(1);
    expect(withoutNewest.stdout).toContain(`missing file: the audit state says the chain goes on to seq`);
  });
});

describe("verify-log on a copy of a log (archived, renamed, on another machine)", () => {
  const caDir = () => path.join(dir, "ca");
  let log: string;
  let lines: string[];
  beforeAll(async () => {
    log = path.join(dir, "away.ndjson");
    const proxy = await startCli(["--log-file", log, "--audit-chain"]);
    for (let i = 0; i < 3; i++) expect((await curlThrough(proxy.url, `${upstream.url}/bytes?n=100`)).out).toBe("200");
    expect(await proxy.stop()).toBe(0);
    lines = (await readFile(log, "utf8")).trimEnd().split("\n");
  });
  const copy = async (name: string, kept = lines): Promise<string> => {
    await mkdir(path.join(dir, "archive"), { recursive: true });
    const to = path.join(dir, "archive", name);
    await writeFile(to, `${kept.join("\n")}\n`);
    return to;
  };

  it("finds the audit state by the chain's identity: an intact renamed copy verifies (exit 0), a cut one fails (exit 1)", async () => {
    const intact = await copy("renamed.ndjson");
    const ok = await runCli(["verify-log", "--ca-dir", caDir(), intact]);
    expect(ok.stdout).toMatch(/ends where the audit state says \(seq \d+\)/);
    expect(ok.code).toBe(0);
    const cut = await copy("cut.ndjson", lines.slice(0, -2));
    const failed = await runCli(["verify-log", "--ca-dir", caDir(), cut]);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toContain(`truncated after seq ${lines.length - 3}: the audit state says the chain reached seq ${lines.length - 1}`);
  });

  it("on another machine: the key and --state FILE copied along check the end; without a state, exit 4 says completeness was not checked", async () => {
    const elsewhere = path.join(dir, "other-machine");
    await mkdir(elsewhere, { recursive: true, mode: 0o700 });
    await writeFile(path.join(elsewhere, "audit.key"), await readFile(path.join(caDir(), "audit", "audit.key")), { mode: 0o600 });
    const stateName = (await readdir(path.join(caDir(), "audit"))).find((n) => n.endsWith(".state") && createHash("sha256").update(log).digest("hex").startsWith(n.slice(0, 16)))!;
    const state = path.join(dir, "archive", "away.state");
    await writeFile(state, await readFile(path.join(caDir(), "audit", stateName)), { mode: 0o644 });

    const cut = await copy("cut-elsewhere.ndjson", lines.slice(0, -1));
    const noState = await runCli(["verify-log", "--audit-dir", elsewhere, cut]);
    expect(noState.code).toBe(4);
    expect(noState.stdout).toMatch(/^note: no audit state for .*\nINCOMPLETE: \d+ records, chain intact, every record authenticated with the audit key; whether records were cut from the end could not be checked/);
    const json = JSON.parse((await runCli(["verify-log", "--json", "--audit-dir", elsewhere, cut])).stdout) as { exitCode: number; state: string };
    expect(json).toMatchObject({ exitCode: 4, state: "none" });

    const withState = await runCli(["verify-log", "--audit-dir", elsewhere, "--state", state, cut]);
    expect(withState.code).toBe(1);
    expect(withState.stdout).toContain(`truncated after seq ${lines.length - 2}: the audit state says the chain reached seq ${lines.length - 1}`);
    const intact = await copy("intact-elsewhere.ndjson");
    expect((await runCli(["verify-log", "--audit-dir", elsewhere, "--state", state, intact])).code).toBe(0);

    // A state of another chain is no evidence about this one.
    const other = path.join(dir, "other-chain.ndjson");
    const proxy = await startCli(["--log-file", other, "--audit-chain"]);
    expect(await proxy.stop()).toBe(0);
    const otherState = (await readdir(path.join(caDir(), "audit"))).find((n) => createHash("sha256").update(other).digest("hex").startsWith(n.slice(0, 16)))!;
    const mismatched = await runCli(["verify-log", "--ca-dir", caDir(), "--state", path.join(caDir(), "audit", otherState), intact]);
    expect(mismatched.code).toBe(1);
    expect(mismatched.stdout).toMatch(/is the state of another chain/);
  });
});

describe.runIf(process.platform !== "win32")("the audit key's folder", () => {
  it("--audit-dir keeps the key and state out of the CA folder (for a read-only one), and verify-log finds them there", async () => {
    const ca = path.join(dir, "ca-kept-clean");
    const audit = path.join(dir, "elsewhere", "audit");
    expect((await runCli(["ca", "path", "--ca-dir", ca])).code).toBe(0);
    const before = (await readdir(ca)).sort();
    const log = path.join(dir, "audit-dir.ndjson");
    const cli = spawnCli(["start", "--port", "0", "--ca-dir", ca, "--audit-dir", audit, "--log-file", log, "--audit-chain", "--upstream-ca", testCaFile()]);
    await cli.waitForStderr(/listening on/, 15_000);
    cli.child.kill("SIGTERM");
    expect((await cli.exited).code).toBe(0);
    expect((await readdir(ca)).sort()).toEqual(before);
    expect((await stat(path.join(audit, "audit.key"))).mode & 0o777).toBe(0o600);
    expect((await stat(audit)).mode & 0o777).toBe(0o700);
    const ok = await runCli(["verify-log", "--audit-dir", audit, log]);
    expect(ok.code).toBe(0);
  });

  // Root may write anywhere: as root (CI), the CLI runs as an ordinary user in a folder of that user's.
  it("a read-only CA folder without --audit-dir: refused with the way out", async (ctx) => {
    if ("missing" in ordinaryUser) return ctx.skip(ordinaryUser.missing);
    const user = ordinaryUser;
    const own = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-ordinary-"));
    await chown(own, user.uid, user.gid);
    const ca = path.join(own, "ca-read-only");
    try {
      expect((await runCli(["ca", "path", "--ca-dir", ca], { as: user })).code).toBe(0);
      await chmod(ca, 0o500);
      const result = await runCli(["start", "--port", "0", "--ca-dir", ca, "--log-file", path.join(own, "ro.ndjson"), "--audit-chain"], { as: user });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/cannot be created \(EACCES\)\. If the CA folder is read-only, give a private, writable folder with --audit-dir/);
      expect(await readdir(ca)).not.toContain("audit");
    } finally {
      await chmod(ca, 0o700).catch(() => undefined);
      await rm(own, { recursive: true, force: true });
    }
  });

  it("an audit key others can read is refused: records sealed with it could have been forged by anyone who read it", async () => {
    const audit = path.join(dir, "loose-audit");
    const log = path.join(dir, "loose.ndjson");
    const first = spawnCli(["start", "--port", "0", "--ca-dir", path.join(dir, "ca"), "--audit-dir", audit, "--log-file", log, "--audit-chain"]);
    await first.waitForStderr(/listening on/, 15_000);
    first.child.kill("SIGTERM");
    expect((await first.exited).code).toBe(0);
    await chmod(path.join(audit, "audit.key"), 0o644);
    const result = await runCli(["start", "--port", "0", "--ca-dir", path.join(dir, "ca"), "--audit-dir", audit, "--log-file", log, "--audit-chain"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`The audit key ${path.join(audit, "audit.key")} has mode 0644: other users can read it.`);
    expect(result.stderr).toMatch(/must be replaced: move it away/);
    const verify = await runCli(["verify-log", "--audit-dir", audit, log]);
    expect(verify.code).toBe(2);
    expect((await stat(path.join(audit, "audit.key"))).mode & 0o777).toBe(0o644);
  });
});

describe.runIf(process.platform !== "win32")("files of other users: refused at start (exit 2), nothing changed", () => {
  it("--log-file that is a symbolic link", async () => {
    const target = path.join(dir, "their.log");
    await writeFile(target, "theirs\n", { mode: 0o600 });
    const link = path.join(dir, "link.ndjson");
    await symlink(target, link);
    const result = await runCli(["start", "--port", "0", "--ca-dir", path.join(dir, "ca"), "--log-file", link]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`mcp-wiretap: --log-file ${link} is a symbolic link.`);
    expect(await readFile(target, "utf8")).toBe("theirs\n");
  });

  it("--keylog file that others can read", async () => {
    const keys = path.join(dir, "keys.log");
    await writeFile(keys, "");
    await chmod(keys, 0o644);
    const result = await runCli(["start", "--port", "0", "--ca-dir", path.join(dir, "ca"), "--keylog", keys]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`The key-log file (--keylog, or $SSLKEYLOGFILE) ${keys} has mode 0644: other users can read it. If nobody else should have, run \`chmod 600 ${keys}\``);
    expect((await stat(keys)).mode & 0o777).toBe(0o644);
  });

  it("--ca-dir that is a shared folder (1777)", async () => {
    const shared = path.join(dir, "shared");
    await mkdir(shared);
    await chmod(shared, 0o1777);
    const result = await runCli(["start", "--port", "0", "--ca-dir", shared]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/The CA folder .*shared has mode 01777: other users can write to it/);
    expect((await stat(shared)).mode & 0o7777).toBe(0o1777);
    expect(await readdir(shared)).toEqual([]);
  });
});

describe("--on-log-error", () => {
  it("pass (default): a full disk is reported loudly and traffic keeps flowing", async () => {
    const proxy = await startCli(["--log-file", "/dev/full"]);
    expect((await curlThrough(proxy.url, `${upstream.url}/bytes?n=100`)).out).toBe("200");
    await waitUntil(() => proxy.stderr().includes("cannot write log records to /dev/full"), { timeoutMs: 5_000, what: "loud error" });
    expect(proxy.stderr()).toContain("UNRECORDED");
    expect((await curlThrough(proxy.url, `${upstream.url}/bytes?n=100`)).out).toBe("200");
    await proxy.stop();
  });

  it("block: traffic that cannot be recorded is refused with 503, and /healthz says so", async () => {
    const proxy = await startCli(["--log-file", "/dev/full", "--on-log-error", "block"]);
    // The start record is the first write to fail.
    await waitUntil(() => proxy.stderr().includes("new traffic is refused"), { timeoutMs: 5_000, what: "block notice" });
    const seen = upstream.requests.length;
    const refused = await curlThrough(proxy.url, `${upstream.url}/bytes?n=100`);
    expect(refused.out).toBe("503");
    expect(upstream.requests.length).toBe(seen);
    const health = await fetch(`${proxy.url}/healthz`);
    expect(health.status).toBe(503);
    await proxy.stop();
  });

  it("a log file that cannot be opened stops the start with a clear message (exit 2)", async () => {
    const result = await runCli(["start", "--port", "0", "--ca-dir", path.join(dir, "ca"), "--log-file", path.join(dir)]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--log-file .*: cannot write to it \(EISDIR\)/);
  });
});
