/** Debian's HAProxy running deploy/haproxy.cfg on loopback in front of two replicas, for the tests of them. */
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { startCliProxy, type CliProxy } from "../helpers/cli-proxy.js";
import { freePort } from "../helpers/loopback.js";
import { startMcpUpstream, type McpUpstream } from "../helpers/mcp-upstream.js";
import { REPO_ROOT } from "../helpers/proxy-harness.js";
import { redisAvailable, startRedis, type RedisServer } from "../state/redis-harness.js";

export function haproxyBinary(): string | null {
  for (const bin of ["haproxy", "/usr/sbin/haproxy"]) {
    try {
      execFileSync(bin, ["-v"], { stdio: "ignore" });
      return bin;
    } catch {
      // next
    }
  }
  return null;
}

/** deploy/haproxy.cfg with its listening address and its two servers on loopback; throws if the file changed shape. */
export function loopbackHaproxyConfig(shipped: string, ports: { front: number; a: number; b: number }, statsSocket: string): string {
  const replacements: [string, string][] = [
    ["global\n", `global\n  stats socket ${statsSocket} mode 600 level user\n`],
    ["  bind :8080\n", `  bind 127.0.0.1:${ports.front}\n`],
    ["  server a wiretap-a:8080 check\n", `  server a 127.0.0.1:${ports.a} check inter 1s fall 3 rise 1\n`],
    ["  server b wiretap-b:8080 check\n", `  server b 127.0.0.1:${ports.b} check inter 1s fall 3 rise 1\n`],
  ];
  let out = shipped;
  for (const [from, to] of replacements) {
    if (!out.includes(from)) throw new Error(`deploy/haproxy.cfg no longer has the line ${JSON.stringify(from)}: update this test with it`);
    out = out.replace(from, to);
  }
  return out;
}

export const CREDENTIALS = "wiretap:change-me";

/** Why the balancer tests cannot run here (tools missing), or null. */
export function balancerTestsMissing(file: string): string | null {
  const missing = [haproxyBinary() ? null : "haproxy", redisAvailable() ? null : "redis-server"].filter(Boolean);
  if (missing.length === 0) return null;
  const why = `${missing.join(" and ")} not installed (scripts/ensure-test-deps.sh, run by npm test, installs them as root)`;
  console.warn(`SKIPPED ${file}: ${why}`);
  return why;
}

export interface BalancedReplicas {
  dir: string;
  redis: RedisServer;
  upstream: McpUpstream;
  a: CliProxy;
  b: CliProxy;
  /** The balancer's port on 127.0.0.1. */
  front: number;
  caPem: string;
  /** HAProxy's stats socket (`show stat`). */
  statsSocket: string;
  haproxyOutput(): string;
  stop(): Promise<void>;
}

/**
 * Two `mcp-wiretap start` replicas as deploy/docker-compose.yml runs them (one CA folder, one policy, one
 * redis-server, proxy credentials), on loopback, behind HAProxy running deploy/haproxy.cfg.
 */
export async function startBalancedReplicas(policyYaml: string): Promise<BalancedReplicas> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "mcp-wiretap-deploy-"));
  const policy = path.join(dir, "policy.yaml");
  writeFileSync(policy, policyYaml);
  const caDir = path.join(dir, "ca");
  const redis = await startRedis();
  const upstream = await startMcpUpstream();
  // `start --host … --ca-dir … --log-file … --config …`, credentials and the state URL as options. The first makes the CA.
  const args = ["--config", policy, "--state", redis.url, "--proxy-auth", CREDENTIALS];
  const a = await startCliProxy(args, { caDir });
  const b = await startCliProxy(args, { caDir });
  const front = await freePort();
  const cfg = path.join(dir, "haproxy.cfg");
  const statsSocket = path.join(dir, "haproxy.sock");
  writeFileSync(cfg, loopbackHaproxyConfig(readFileSync(path.join(REPO_ROOT, "deploy", "haproxy.cfg"), "utf8"), { front, a: a.port, b: b.port }, statsSocket));
  const bin = haproxyBinary()!;
  execFileSync(bin, ["-c", "-f", cfg], { stdio: "pipe" });
  const haproxy = spawn(bin, ["-db", "-f", cfg], { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  haproxy.stdout!.on("data", (c: Buffer) => (output += c.toString()));
  haproxy.stderr!.on("data", (c: Buffer) => (output += c.toString()));
  const stop = async (): Promise<void> => {
    haproxy.kill("SIGKILL");
    await Promise.all([a.dispose(), b.dispose()]);
    await upstream.close();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 10_000;
  while (!(await listening(front))) {
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`HAProxy not listening on ${front}: ${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return { dir, redis, upstream, a, b, front, caPem: readFileSync(path.join(caDir, "ca.pem"), "utf8"), statsSocket, haproxyOutput: () => output, stop };
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, "127.0.0.1", () => (s.destroy(), resolve(true)));
    s.once("error", () => resolve(false));
  });
}
