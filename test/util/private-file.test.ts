import { closeSync } from "node:fs";
import { chmod, lstat, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { openPrivateAppend, readPrivateFile, writeFileAtomicSync } from "../../src/util/private-file.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-private-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe.runIf(process.platform !== "win32")("private files", () => {
  it("writeFileAtomicSync replaces a link at the path with a new 0600 file, and the link's target is untouched", async () => {
    const victim = path.join(dir, "victim");
    await writeFile(victim, "precious\n");
    const file = path.join(dir, "pins.json");
    await symlink(victim, file);
    writeFileAtomicSync(file, "{}\n");
    expect(await readFile(victim, "utf8")).toBe("precious\n");
    const info = await lstat(file);
    expect(info.isFile()).toBe(true);
    expect(info.mode & 0o777).toBe(0o600);
    expect(await readFile(file, "utf8")).toBe("{}\n");
  });

  it("readPrivateFile refuses a link and a file others can read; a missing file is null", async () => {
    const file = path.join(dir, "store.json");
    expect(readPrivateFile(file, "The pin store")).toBeNull();
    await writeFile(file, "{}");
    await chmod(file, 0o644);
    expect(() => readPrivateFile(file, "The pin store")).toThrow(`The pin store ${file} has mode 0644`);
    const link = path.join(dir, "link.json");
    await symlink(file, link);
    expect(() => readPrivateFile(link, "The pin store")).toThrow(/is a symbolic link/);
  });

  it("openPrivateAppend takes a device as it is (/dev/null)", () => {
    closeSync(openPrivateAppend("/dev/null", "--log-file"));
  });
});

describe.runIf(process.platform !== "win32")("a FIFO at a log path", () => {
  it("is held to the rules of a file: one others can read is refused (a reader at its other end would get every record)", async () => {
    const { execFileSync } = await import("node:child_process");
    const fifo = path.join(dir, "fifo");
    execFileSync("mkfifo", ["-m", "0644", fifo]);
    // Without a reader the open fails at once instead of waiting for one.
    expect(() => openPrivateAppend(fifo, "--log-file")).toThrow(expect.objectContaining({ code: "ENXIO" }));
    const { openSync, constants } = await import("node:fs");
    const reader = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      expect(() => openPrivateAppend(fifo, "--log-file")).toThrow(`--log-file ${fifo} has mode 0644`);
    } finally {
      closeSync(reader);
    }
  });
});
