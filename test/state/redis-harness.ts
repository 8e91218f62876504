/**
 * A real redis-server on a loopback port for the shared-state tests (scripts/ensure-test-deps.sh installs it).
 * Redis has no "port 0": a free port is found first, then handed to it.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { freePort } from "../helpers/loopback.js";
import { waitUntil } from "../helpers/wait-until.js";

export function redisAvailable(): boolean {
  try {
    execFileSync("redis-server", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

export interface RedisServer {
  url: string;
  port: number;
  /** Stops it (SIGKILL: as a crash would); idempotent. */
  stop(): Promise<void>;
}

/** A new redis-server; `port` to bring one back where an earlier one was. */
export async function startRedis(port?: number): Promise<RedisServer> {
  port ??= await freePort();
  const child: ChildProcess = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--protected-mode", "yes"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.on("data", (c: Buffer) => (out += c.toString()));
  let exited = false;
  const gone = new Promise<void>((resolve) => child.once("exit", () => ((exited = true), resolve())));
  await waitUntil(() => /Ready to accept connections/.test(out) || exited, { timeoutMs: 10_000, what: "redis-server to start" });
  if (exited) throw new Error(`redis-server did not start:\n${out}`);
  return {
    url: `redis://127.0.0.1:${port}/0`,
    port,
    async stop() {
      if (!exited) child.kill("SIGKILL");
      await gone;
    },
  };
}

/**
 * The replicas' policy in the shared-state tests: enforce mode, 5 `tools/call` per minute in all, pins flagged.
 * Each test file names its limit (the counters' key in Redis): a file whose redis-server comes back on a port
 * another file's took meanwhile must not count against that file's limit.
 */
export const sharedLimitPolicy = (limit: string): string => `mode: enforce
detectors: { secrets: off, pii: off, hiddenText: off, poisoning: off, toolPinning: flag, schema: off }
rateLimits:
  - name: ${limit}
    match: { method: tools/call, kind: request }
    perMinute: 5
    per: global
`;
