/**
 * The policy wire suites' setup (not a test file): a scripted MCP upstream, a proxy started with a policy,
 * and a raw client through it, made before the suite's tests and closed after them.
 */
import { afterAll, beforeAll } from "vitest";
import type { StartOptions } from "../../src/cli/start.js";
import { startTestProxy, type TestProxy } from "../helpers/proxy-harness.js";
import { startScriptedUpstream, type ScriptedUpstream } from "../helpers/scripted-mcp-upstream.js";
import { tempDir, writePolicyFile } from "./policy-fixtures.js";
import { scriptMcp, type ScriptedMcp } from "./scripted-server.js";
import { wireClient, type WireClient } from "./wire-client.js";

export interface WireScenario {
  up: ScriptedUpstream;
  mcp: ScriptedMcp;
  proxy: TestProxy;
  client: WireClient;
  /** The upstream's MCP endpoint. */
  url: string;
}

/** Registers the suite's hooks; the returned object is filled in once `beforeAll` has run. */
export function wireScenario(policy: string, proxyOptions: Partial<StartOptions> = {}): WireScenario {
  const scenario = {} as WireScenario;
  let tmp: ReturnType<typeof tempDir> | undefined;
  beforeAll(async () => {
    tmp = tempDir();
    scenario.up = await startScriptedUpstream();
    scenario.mcp = scriptMcp(scenario.up);
    scenario.url = `${scenario.up.url}/mcp`;
    scenario.proxy = await startTestProxy({ ...proxyOptions, config: writePolicyFile(tmp.dir, policy) });
    scenario.client = wireClient(scenario.proxy);
  });
  afterAll(async () => {
    await scenario.client?.close();
    await scenario.proxy?.stop();
    await scenario.up?.close();
    tmp?.cleanup();
  });
  return scenario;
}

export interface ModePair {
  up: ScriptedUpstream;
  enforce: TestProxy;
  monitor: TestProxy;
}

/** One scripted upstream and two proxies with the same rules (given the upstream's port), in enforce and monitor mode. */
export function enforceAndMonitor(rules: (port: number) => string): ModePair {
  const pair = {} as ModePair;
  let tmp: ReturnType<typeof tempDir> | undefined;
  beforeAll(async () => {
    tmp = tempDir();
    pair.up = await startScriptedUpstream();
    scriptMcp(pair.up);
    pair.enforce = await startTestProxy({ config: writePolicyFile(tmp.dir, `mode: enforce\n${rules(pair.up.port)}`, "enforce.yaml") });
    pair.monitor = await startTestProxy({ config: writePolicyFile(tmp.dir, `mode: monitor\n${rules(pair.up.port)}`, "monitor.yaml") });
  });
  afterAll(async () => {
    await pair.enforce?.stop();
    await pair.monitor?.stop();
    await pair.up?.close();
    tmp?.cleanup();
  });
  return pair;
}

