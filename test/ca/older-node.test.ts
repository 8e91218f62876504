/**
 * The CA module on a Node.js without `X509Certificate.validFromDate`/`validToDate` (before 22.10): it still
 * loads and creates the CA with the right validity. The CLI refuses such a Node up front
 * (test/cli/node-version.test.ts); this keeps a library import from crashing there. Uses the system's
 * Node 20 (`/usr/bin/node`) and the built dist/; skipped, saying so, where that Node is missing.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { assertBuilt, REPO_ROOT } from "../helpers/proxy-harness.js";

const OLD_NODE = "/usr/bin/node";
if (!existsSync(OLD_NODE)) console.warn(`SKIPPED the CA on an older Node: ${OLD_NODE} is missing`);

const SCRIPT = `
const { loadOrCreateCa } = await import(process.argv[1]);
const created = await loadOrCreateCa(process.argv[2]);
const loaded = await loadOrCreateCa(process.argv[2]);
console.log(JSON.stringify({ node: process.versions.node, created: created.created, warning: loaded.warning, info: loaded.info(), notBefore: loaded.notBefore, notAfter: loaded.notAfter }));
`;

describe.skipIf(!existsSync(OLD_NODE))("loadOrCreateCa on the system's Node", () => {
  it("creates and reloads the CA, with its validity as dates", async () => {
    assertBuilt();
    const dir = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-ca-old-node-"));
    try {
      const module = pathToFileURL(path.join(REPO_ROOT, "dist", "ca", "index.js")).href;
      const out = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = execFile(OLD_NODE, ["--input-type=module", "-e", SCRIPT, module, path.join(dir, "ca")], { timeout: 30_000 }, (_e, stdout, stderr) =>
          resolve({ code: child.exitCode, stdout: String(stdout), stderr: String(stderr) }),
        );
      });
      expect(out.stderr).toBe("");
      expect(out.code).toBe(0);
      const seen = JSON.parse(out.stdout) as { created: boolean; warning: string | null; info: { notBefore: string; notAfter: string }; notBefore: number; notAfter: number };
      expect(seen.created).toBe(true);
      expect(seen.warning).toBeNull();
      const notBefore = Date.parse(seen.info.notBefore);
      expect(Math.abs(notBefore - (Date.now() - 60 * 60 * 1000))).toBeLessThan(10 * 60 * 1000);
      expect(seen.notBefore).toBe(notBefore);
      expect(seen.notAfter).toBe(Date.parse(seen.info.notAfter));
      expect(Math.round((seen.notAfter - seen.notBefore) / (24 * 60 * 60 * 1000))).toBe(3650);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
