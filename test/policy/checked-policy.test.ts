/**
 * The shipped policy's reading kept by the build (dist/config/policy.json): the same as reading the YAML, and
 * taken only for a file whose text is the shipped one.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { CHECKED_POLICY_FILE, DEFAULT_POLICY_FILE } from "../../src/util/package-info.js";
import { readPolicyConfig } from "../../src/policy/checked-policy.js";
import { loadPolicyFile, PolicyConfigError } from "../../src/policy/load-config.js";
import { assertBuilt } from "../helpers/proxy-harness.js";
import { tempDir } from "../helpers/stdio-shim.js";

const dir = tempDir("mcp-wiretap-checked-policy-");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("the shipped policy's checked reading", () => {
  it("is what reading and validating config/policy.yaml gives", async () => {
    assertBuilt();
    expect(await readPolicyConfig(DEFAULT_POLICY_FILE, CHECKED_POLICY_FILE)).toEqual(loadPolicyFile(DEFAULT_POLICY_FILE));
  });

  it("is not taken for an edited copy, nor for a broken file: those are read and validated", async () => {
    const edited = path.join(dir, "edited.yaml");
    writeFileSync(edited, readFileSync(DEFAULT_POLICY_FILE, "utf8").replace("mode: monitor", "mode: enforce"));
    expect((await readPolicyConfig(edited, CHECKED_POLICY_FILE)).mode).toBe("enforce");
    const broken = path.join(dir, "broken.yaml");
    writeFileSync(broken, readFileSync(DEFAULT_POLICY_FILE, "utf8") + "\nrulez: []\n");
    await expect(readPolicyConfig(broken, CHECKED_POLICY_FILE)).rejects.toBeInstanceOf(PolicyConfigError);
    await expect(readPolicyConfig(path.join(dir, "missing.yaml"), CHECKED_POLICY_FILE)).rejects.toThrow(/cannot read the policy file/);
  });

  it("a kept reading that is missing or not JSON: the file is read as always", async () => {
    const junk = path.join(dir, "policy.json");
    writeFileSync(junk, "{not json");
    expect(await readPolicyConfig(DEFAULT_POLICY_FILE, junk)).toEqual(loadPolicyFile(DEFAULT_POLICY_FILE));
    expect(await readPolicyConfig(DEFAULT_POLICY_FILE, path.join(dir, "none.json"))).toEqual(loadPolicyFile(DEFAULT_POLICY_FILE));
  });
});
