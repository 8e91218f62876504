/** The built CLI's `--intercept` options: what it refuses, before anything starts, and why. */
import { describe, expect, it } from "vitest";
import { runCli } from "../helpers/proxy-harness.js";

describe("--intercept on the command line", () => {
  it("needs the web UI, a filter of tail's tokens and a timeout above 0, and says so with exit 2", async () => {
    const noUi = await runCli(["stdio", "--intercept", "tool:echo", "--", "true"]);
    expect(noUi.code).toBe(2);
    expect(noUi.stderr).toMatch(/--intercept holds messages until they are released in the web UI: add --ui/);
    const badFilter = await runCli(["start", "--port", "0", "--ui-port", "0", "--intercept", "echo"]);
    expect(badFilter.code).toBe(2);
    expect(badFilter.stderr).toMatch(/only the tokens server: session: method: tool: decision: dir: \(not echo\)/);
    const badTimeout = await runCli(["run", "--ui", "--intercept", "tool:x", "--intercept-timeout", "0", "--", "true"]);
    expect(badTimeout.code).toBe(2);
    expect(badTimeout.stderr).toMatch(/--intercept-timeout.*above 0/);
  }, 30_000);
});
