/**
 * Replicas share one CA mounted read-only (a Compose `:ro` volume, a Kubernetes Secret copied once): the
 * proxy starts from it and intercepts without writing to it. The folder is made read-only with a real
 * read-only bind mount (root only; skipped loudly elsewhere).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadOrCreateCa } from "../../src/ca/index.js";
import { connectStreamable } from "../helpers/mcp-client.js";
import { startMcpUpstream, type McpUpstream } from "../helpers/mcp-upstream.js";
import { startTestProxy } from "../helpers/proxy-harness.js";

function canBindReadOnly(): boolean {
  const probe = mkdtempSync(path.join(os.tmpdir(), "mcp-wiretap-ro-probe-"));
  try {
    execFileSync("mount", ["--bind", probe, probe], { stdio: "ignore" });
    execFileSync("mount", ["-o", "remount,bind,ro", probe], { stdio: "ignore" });
    execFileSync("umount", [probe], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}

const canMount = process.platform === "linux" && canBindReadOnly();
if (!canMount) console.warn("SKIPPED test/state/read-only-ca.test.ts: a read-only bind mount needs root on Linux");

describe.skipIf(!canMount)("a read-only CA folder", () => {
  let upstream: McpUpstream;
  let dir: string;
  let mounted: string;
  beforeAll(async () => {
    upstream = await startMcpUpstream();
    dir = mkdtempSync(path.join(os.tmpdir(), "mcp-wiretap-ro-ca-"));
    const source = path.join(dir, "source");
    await loadOrCreateCa(source);
    mounted = path.join(dir, "ca");
    mkdirSync(mounted);
    execFileSync("mount", ["--bind", source, mounted]);
    execFileSync("mount", ["-o", "remount,bind,ro", mounted]);
  });
  afterAll(async () => {
    if (mounted) execFileSync("umount", [mounted]);
    await upstream?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("starts, intercepts and logs, and leaves the folder as it was", async () => {
    expect(() => writeFileSync(path.join(mounted, "probe"), "x")).toThrow(/EROFS/);
    const before = readdirSync(mounted).sort();
    const proxy = await startTestProxy({ caDir: mounted, logFile: path.join(dir, "log.ndjson") });
    const connected = await connectStreamable(upstream.streamableUrl, { proxyUrl: proxy.url, caPem: proxy.caPem });
    try {
      const result = await connected.client.callTool({ name: "echo", arguments: { message: "ro" } });
      expect(JSON.stringify(result.content)).toContain("ro");
      await connected.client.listTools();
    } finally {
      await connected.close();
    }
    const records = await proxy.stop();
    expect(records.some((r) => r.event === "rpc" && r.kind === "response" && r.tool === "echo")).toBe(true);
    // Pins cannot be written there: said on the record, never a crash (use --state to share them).
    const list = records.find((r) => r.event === "rpc" && r.kind === "response" && r.method === "tools/list")!;
    expect(JSON.stringify(list.decision)).toContain("pins_not_saved");
    expect(readdirSync(mounted).sort()).toEqual(before);
  }, 60_000);
});
