/**
 * A StdioTap over a test pipeline (not a test file): what it forwards each way is kept in `toServer` and
 * `toClient`, and a stage that fails on a line throws.
 */
import { StdioTap } from "../../src/stdio/stdio-tap.js";
import type { StdioTapOptions } from "../../src/stdio/stdio-tap.js";

export interface CapturingTap {
  tap: StdioTap;
  toServer: Buffer[];
  toClient: Buffer[];
}

export function capturingStdioTap(
  pipeline: StdioTapOptions["pipeline"],
  opts: { maxInspectBytes: number; mode: "monitor" | "enforce"; removeDeniedTools?: boolean },
): CapturingTap {
  const toServer: Buffer[] = [];
  const toClient: Buffer[] = [];
  const tap = new StdioTap({
    pipeline,
    server: "stdio:test",
    session: "stdio-1",
    maxInspectBytes: opts.maxInspectBytes,
    ...(opts.mode === "enforce" ? { enforce: { removeDeniedTools: opts.removeDeniedTools ?? true } } : {}),
    toServer: (b) => toServer.push(Buffer.from(b)),
    toClient: (b) => toClient.push(Buffer.from(b)),
    onError: (err) => {
      throw err;
    },
  });
  return { tap, toServer, toClient };
}
