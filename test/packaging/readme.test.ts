/**
 * What a newcomer reads first: the README opens with the two commands, then how to install the CLI and run
 * it outside the repository, with the notes that answer the first questions (an old Node, EBADENGINE), and
 * explains tail's marks. The log-format examples show what the SDK sends (`inputRequests` is an object).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../helpers/proxy-harness.js";

const README = readFileSync(path.join(REPO_ROOT, "README.md"), "utf8");
const LOG_FORMAT = readFileSync(path.join(REPO_ROOT, "docs", "log-format.md"), "utf8");

describe("README for a newcomer", () => {
  it("opens with the two commands, then the install section", () => {
    const [title, block] = README.split(/\n```sh\n|\n```\n/);
    expect(title!.trim()).toBe("# mcp-wiretap");
    expect(block).toMatch(/^npm install && npm start\b/m);
    expect(block).toMatch(/^npm install && npm test\b/m);
    const afterBlock = README.slice(README.indexOf("```\n", README.indexOf("```sh")) + 4);
    expect(afterBlock.trimStart().startsWith("## Install\n")).toBe(true);
  });

  it("the install section covers the clone, npx, a global install and a packed tarball, and the Node notes", () => {
    const install = README.slice(README.indexOf("## Install"), README.indexOf("\n## ", README.indexOf("## Install") + 1));
    for (const command of ["npx mcp-wiretap start", "npm install -g .", "npm pack && npm install -g ./mcp-wiretap-*.tgz"]) expect(install).toContain(command);
    expect(install).toContain("mcp-wiretap needs Node.js ≥ 22.12 (found 20.x)");
    expect(install).toMatch(/EBADENGINE[\s\S]*harmless/);
  });

  it("explains tail's DENY* and DENY", () => {
    expect(README).toMatch(/\| `DENY\* rule` \| .*enforced/);
    expect(README).toMatch(/\| `DENY rule` \| .*logged only/);
  });
});

describe("docs/log-format.md examples", () => {
  it("input_required results carry inputRequests as an object, as the SDK sends them", () => {
    const records = LOG_FORMAT.split("\n")
      .filter((line) => line.startsWith("{"))
      .flatMap((line) => {
        try {
          return [JSON.parse(line) as { result?: { resultType?: string; inputRequests?: unknown } }];
        } catch {
          return [];
        }
      })
      .filter((r) => r.result?.resultType === "input_required");
    expect(records.length).toBeGreaterThan(0);
    for (const r of records) {
      expect(typeof r.result!.inputRequests).toBe("object");
      expect(Array.isArray(r.result!.inputRequests)).toBe(false);
    }
  });
});
