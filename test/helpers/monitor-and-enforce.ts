/**
 * One upstream (server-everything, optionally customised) and two proxies in front of it, logging full
 * payloads: one in monitor mode, one in enforce mode, each with its policy text. Started before the file's
 * tests, stopped after (not a test file itself).
 */
import { afterAll, beforeAll } from "vitest";
import { type McpUpstream, type McpUpstreamOptions, startMcpUpstream } from "./mcp-upstream.js";
import { type TestProxy, startTestProxy } from "./proxy-harness.js";
import { tempDir, writePolicyFile } from "../policy/policy-fixtures.js";

export interface MonitorAndEnforce {
  readonly upstream: McpUpstream;
  readonly monitor: TestProxy;
  readonly enforce: TestProxy;
}

export function monitorAndEnforce(o: { upstream?: McpUpstreamOptions; monitorPolicy?: string; enforcePolicy: string }): MonitorAndEnforce {
  let upstream: McpUpstream | undefined;
  let monitor: TestProxy | undefined;
  let enforce: TestProxy | undefined;
  let tmp: ReturnType<typeof tempDir> | undefined;
  beforeAll(async () => {
    tmp = tempDir();
    upstream = await startMcpUpstream(o.upstream);
    [monitor, enforce] = await Promise.all([
      startTestProxy({ payloads: "full", ...(o.monitorPolicy !== undefined ? { config: writePolicyFile(tmp.dir, o.monitorPolicy, "monitor.yaml") } : {}) }),
      startTestProxy({ payloads: "full", config: writePolicyFile(tmp.dir, o.enforcePolicy, "enforce.yaml") }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([monitor?.stop(), enforce?.stop()]);
    await upstream?.close();
    tmp?.cleanup();
  });
  return {
    get upstream() {
      return upstream!;
    },
    get monitor() {
      return monitor!;
    },
    get enforce() {
      return enforce!;
    },
  };
}
