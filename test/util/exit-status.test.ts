import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { exitStatus } from "../../src/util/exit-status.js";

/** How a real child ended, as node reports it. */
function endOf(script: string, signal?: NodeJS.Signals): Promise<[number | null, NodeJS.Signals | null]> {
  return new Promise((resolve) => {
    const child = spawn("sh", ["-c", script], { stdio: "ignore" });
    if (signal) child.once("spawn", () => child.kill(signal));
    child.once("exit", (code, sig) => resolve([code, sig]));
  });
}

describe("exitStatus (run and stdio pass a child's end on alike)", () => {
  it("a child's own code as it is", async () => {
    expect(exitStatus(...(await endOf("exit 3")))).toBe(3);
    expect(exitStatus(...(await endOf("exit 0")))).toBe(0);
  });

  it("a child ended by a signal: 128 + its number, as a shell says it (SIGTERM 143, SIGKILL 137)", async () => {
    expect(exitStatus(...(await endOf("sleep 5", "SIGTERM")))).toBe(143);
    expect(exitStatus(...(await endOf("sleep 5", "SIGKILL")))).toBe(137);
    // What sh itself reports for a child killed the same way.
    const { execFileSync } = await import("node:child_process");
    expect(execFileSync("sh", ["-c", 'sh -c "kill -TERM \\$\\$"; echo $?']).toString().trim()).toBe("143");
  });

  it("a signal with no known number still fails: 1, never 128", () => {
    expect(exitStatus(null, "SIGNOTASIGNAL" as NodeJS.Signals)).toBe(1);
    expect(exitStatus(null, null)).toBe(1);
  });
});
