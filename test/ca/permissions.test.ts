import { chmod, chown, lchown, mkdir, readdir, readFile, rm, stat, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CaError, loadOrCreateCa } from "../../src/ca/index.js";
import { tempDir } from "./temp-dirs.js";

const posix = process.platform !== "win32";
const root = process.getuid?.() === 0;
const NOBODY = 65534;

async function mode(file: string): Promise<number> {
  return (await stat(file)).mode & 0o7777;
}

async function refusal(dir: string): Promise<CaError> {
  const error = await loadOrCreateCa(dir).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CaError);
  return error as CaError;
}

describe.runIf(posix)("the CA folder and files against other users", () => {
  it("refuses a shared folder (mode 1777) as --ca-dir, leaves its mode alone and puts no key in it", async () => {
    const shared = path.join(await tempDir(), "shared");
    await mkdir(shared);
    await chmod(shared, 0o1777);
    const error = await refusal(shared);
    expect(error.message).toContain(shared);
    expect(error.message).toContain("mode 01777");
    expect(error.message).toMatch(/other users can write to it/);
    expect(error.message).toMatch(/private folder/);
    expect(await mode(shared)).toBe(0o1777);
    expect(await readdir(shared)).toEqual([]);
  });

  it("refuses a folder others can write (0775) without changing it", async () => {
    const dir = path.join(await tempDir(), "group-writable");
    await mkdir(dir);
    await chmod(dir, 0o775);
    await refusal(dir);
    expect(await mode(dir)).toBe(0o775);
  });

  it("uses an existing 0755 folder of its own as it is: the key is 0600 by itself, the folder is not chmod-ed", async () => {
    const dir = path.join(await tempDir(), "ca");
    await mkdir(dir);
    await chmod(dir, 0o755);
    const ca = await loadOrCreateCa(dir);
    expect(await mode(dir)).toBe(0o755);
    expect(await mode(ca.keyPath)).toBe(0o600);
    expect((await loadOrCreateCa(dir)).info().fingerprint256).toBe(ca.info().fingerprint256);
  });

  it("creates a new folder, and the missing folders above it, with mode 0700", async () => {
    const base = await tempDir();
    const dir = path.join(base, "new-parent", "ca");
    await loadOrCreateCa(dir);
    expect(await mode(dir)).toBe(0o700);
    expect(await mode(path.join(base, "new-parent"))).toBe(0o700);
  });

  it("refuses a CA key others can read, says it may have been exposed and how to replace it, and changes nothing", async () => {
    const dir = path.join(await tempDir(), "ca");
    const ca = await loadOrCreateCa(dir);
    await chmod(ca.keyPath, 0o644);
    const key = await readFile(ca.keyPath, "utf8");
    const error = await refusal(dir);
    expect(error.message).toContain(ca.keyPath);
    expect(error.message).toContain("mode 0644");
    expect(error.message).toMatch(/may have been (read|exposed)/);
    expect(error.message).toMatch(/new CA/);
    expect(error.message).toContain(`delete ${ca.certPath} and ${ca.keyPath}`);
    expect(error.message).toMatch(/trust the new ca\.pem/);
    expect(await mode(ca.keyPath)).toBe(0o644);
    expect(await readFile(ca.keyPath, "utf8")).toBe(key);
  });

  it("refuses a CA key that is a symbolic link (to a valid key elsewhere)", async () => {
    const base = await tempDir();
    const other = await loadOrCreateCa(path.join(base, "other"));
    const dir = path.join(base, "ca");
    await mkdir(dir, { mode: 0o700 });
    await writeFile(path.join(dir, "ca.pem"), other.certPem);
    await symlink(other.keyPath, path.join(dir, "ca-key.pem"));
    const error = await refusal(dir);
    expect(error.message).toContain(path.join(dir, "ca-key.pem"));
    expect(error.message).toMatch(/symbolic link/);
  });

  it("refuses a CA certificate that is a symbolic link", async () => {
    const base = await tempDir();
    const dir = path.join(base, "ca");
    const ca = await loadOrCreateCa(dir);
    const elsewhere = path.join(base, "elsewhere.pem");
    await writeFile(elsewhere, ca.certPem);
    await rm(ca.certPath);
    await symlink(elsewhere, ca.certPath);
    expect((await refusal(dir)).message).toMatch(/ca\.pem is a symbolic link/);
  });

  it("refuses a CA key, a folder, or a link to a folder that belongs to another user", async (ctx) => {
    if (!root) return ctx.skip("only root can give a file to another user (CI runs as root)");
    const base = await tempDir();
    const dir = path.join(base, "ca");
    const ca = await loadOrCreateCa(dir);
    await chown(ca.keyPath, NOBODY, NOBODY);
    expect((await refusal(dir)).message).toMatch(/belongs to another user \(uid 65534/);

    const theirs = path.join(base, "theirs");
    await mkdir(theirs, { mode: 0o700 });
    await chown(theirs, NOBODY, NOBODY);
    expect((await refusal(theirs)).message).toContain(theirs);
    expect(await readdir(theirs)).toEqual([]);

    const mine = path.join(base, "mine");
    await mkdir(mine, { mode: 0o700 });
    const planted = path.join(base, "planted");
    await symlink(mine, planted);
    await lchown(planted, NOBODY, NOBODY);
    expect((await refusal(planted)).message).toMatch(/symbolic link.*uid 65534/s);
    expect(await readdir(mine)).toEqual([]);
  });
});
