import { chmod, mkdtemp, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { KeyLog } from "../../src/proxy/keylog.js";
import { UsageError } from "../../src/util/usage-error.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-keylog-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const LINE = Buffer.from("CLIENT_RANDOM 00 11\n");

describe("--keylog file", () => {
  it("is created 0600 and appended to", async () => {
    const file = path.join(dir, "keys.log");
    const keylog = new KeyLog(file);
    keylog.write(LINE);
    await keylog.close();
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await readFile(file, "utf8")).toBe(LINE.toString());
  });

  it.runIf(process.platform !== "win32")("is refused when others can read the existing file (it would hold session secrets), and left unchanged", async () => {
    const file = path.join(dir, "keys.log");
    await writeFile(file, "old\n");
    await chmod(file, 0o644);
    expect(() => new KeyLog(file)).toThrow(UsageError);
    expect(() => new KeyLog(file)).toThrow(`The key-log file (--keylog, or $SSLKEYLOGFILE) ${file} has mode 0644: other users can read it. If nobody else should have, run \`chmod 600 ${file}\``);
    expect((await stat(file)).mode & 0o777).toBe(0o644);
    expect(await readFile(file, "utf8")).toBe("old\n");
  });

  it("is refused when it is a symbolic link, and the link's target gets nothing", async () => {
    const target = path.join(dir, "elsewhere");
    await writeFile(target, "", { mode: 0o600 });
    const file = path.join(dir, "keys.log");
    await symlink(target, file);
    expect(() => new KeyLog(file)).toThrow(/The key-log file \(--keylog, or \$SSLKEYLOGFILE\) .*keys\.log is a symbolic link/);
    expect(await readFile(target, "utf8")).toBe("");
  });
});
