/**
 * deploy/docker-compose.yml brought up unchanged with podman-compose, on local stand-ins for the images no
 * registry gives here (scripts/deploy/base-images.sh): Debian's HAProxy and Redis, and an OTLP/HTTP sink
 * in place of the Collector. What the test adds, it adds from outside the file: podman run arguments
 * mounting a policy with a shared rate limit over the image's /app/config/policy.yaml, naming the test's
 * HTTPS MCP server upstream.test, and trusting the test CA that signed it (NODE_EXTRA_CA_CERTS). That server
 * (upstream-server.mjs) runs in a container of the same image on the Compose network: a container reaches
 * no host loopback, and a host's address on the bridge may be firewalled off where the suite runs.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectStreamable } from "../../helpers/mcp-client.js";
import { REPO_ROOT, type LogRecord } from "../../helpers/proxy-harness.js";
import { testPki } from "../../helpers/test-pki.js";
import { sharedLimitPolicy } from "../../state/redis-harness.js";
import { BUILD_ARGS, exec, IMAGE, podman, uniqueName, until } from "./podman.js";

const PROJECT = "mcp-wiretap";
const CREDENTIALS = "wiretap:change-me";
const DEPLOY = path.join(REPO_ROOT, "deploy");
const CA_DIR = path.join(DEPLOY, "ca");
const NETWORK = `${PROJECT}_default`;
const container = (service: string): string => `${PROJECT}_${service}_1`;
const UPSTREAM = uniqueName("upstream");
const UPSTREAM_PORT = 8443;

async function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer().once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

describe("deploy/docker-compose.yml under podman-compose", () => {
  let dir: string;
  let caPem: string;
  let madeCa = false;
  let composeArgs: string[];
  const env = { ...process.env, MCP_WIRETAP_PROXY_AUTH: CREDENTIALS };

  async function compose(args: string[], timeoutMs = 240_000): Promise<string> {
    const { stdout, stderr } = await exec("podman-compose", [...composeArgs, ...args], { cwd: DEPLOY, env, timeoutMs });
    return stdout + stderr;
  }

  async function leftovers(): Promise<string[]> {
    const label = `label=io.podman.compose.project=${PROJECT}`;
    const [containers, volumes, networks] = await Promise.all([
      podman(["ps", "-a", "--filter", label, "--format", "{{.Names}}"]),
      podman(["volume", "ls", "--filter", label, "--format", "{{.Name}}"]),
      podman(["network", "ls", "--format", "{{.Name}}"]),
    ]);
    return [...containers.stdout.split("\n"), ...volumes.stdout.split("\n"), ...networks.stdout.split("\n").filter((n) => n === NETWORK)].filter(Boolean);
  }

  beforeAll(async () => {
    if (!(await portFree(8080))) throw new Error("127.0.0.1:8080 (the Compose file's published port) is in use: stop what listens there");
    if (existsSync(CA_DIR)) throw new Error(`${CA_DIR} exists: move it aside (this test makes and removes its own)`);
    if ((await leftovers()).length > 0) throw new Error(`a Compose project ${PROJECT} is still there: podman-compose -p ${PROJECT} down -v`);
    dir = mkdtempSync(path.join(os.tmpdir(), "mcp-wiretap-compose-"));
    // As the file's header says: one CA for every replica, owned by the image's user, made by the image.
    mkdirSync(CA_DIR, { mode: 0o700 });
    madeCa = true;
    execFileSync("chown", ["1000:1000", CA_DIR]);
    await podman(["run", "--rm", "--pull=never", "-v", `${CA_DIR}:/app/certs`, IMAGE, "ca", "path", "--ca-dir", "/app/certs"]);
    caPem = readFileSync(path.join(CA_DIR, "ca.pem"), "utf8");
    const policy = path.join(dir, "policy.yaml");
    writeFileSync(policy, sharedLimitPolicy("five-calls-compose"));
    chmodSync(policy, 0o644);
    const pki = testPki();
    const upstreamFiles = { "upstream-ca.pem": pki.caPem, "cert.pem": pki.serverCertPem, "key.pem": pki.serverKeyPem };
    for (const [name, pem] of Object.entries(upstreamFiles)) {
      writeFileSync(path.join(dir, name), pem);
      chmodSync(path.join(dir, name), 0o644); // the image's user reads them; a test key
    }
    const upstreamCa = path.join(dir, "upstream-ca.pem");
    // The network first, and the test's MCP server on it, to know its address.
    await podman(["network", "create", NETWORK]);
    await podman([
      "run", "-d", "--pull=never", "--name", UPSTREAM, "--network", NETWORK, "--entrypoint", "node",
      "-e", `PORT=${UPSTREAM_PORT}`,
      "-v", `${path.join(REPO_ROOT, "test/deploy/containers/upstream-server.mjs")}:/app/test-upstream.mjs:ro`,
      "-v", `${path.join(dir, "cert.pem")}:/etc/upstream/cert.pem:ro`, "-v", `${path.join(dir, "key.pem")}:/etc/upstream/key.pem:ro`,
      IMAGE, "/app/test-upstream.mjs",
    ]);
    const upstreamIp = (await podman(["inspect", "--format", `{{(index .NetworkSettings.Networks "${NETWORK}").IPAddress}}`, UPSTREAM])).stdout.trim();
    await until(async () => (await podman(["logs", UPSTREAM])).stdout.includes("upstream listening"), 30_000, () => "the test's MCP server listening");
    // The build options of the image built first: its layers are reused.
    composeArgs = ["-p", PROJECT, "-f", "docker-compose.yml", "--podman-build-args", BUILD_ARGS.join(" "), "--podman-run-args", `--add-host upstream.test:${upstreamIp} -v ${policy}:/app/config/policy.yaml:ro -v ${upstreamCa}:/etc/mcp-wiretap-test/upstream-ca.pem:ro -e NODE_EXTRA_CA_CERTS=/etc/mcp-wiretap-test/upstream-ca.pem`];
    const t0 = Date.now();
    await compose(["up", "-d", "--build"]);
    console.log(`test:deploy: podman-compose up --build took ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    // Both replicas healthy (the image's HEALTHCHECK), and neither marked down by HAProxy's own checks
    // (a replica still starting may have been: it comes back after `rise` checks).
    for (const service of ["wiretap-a", "wiretap-b"]) {
      await until(async () => (await podman(["healthcheck", "run", container(service)]), true), 60_000, () => `${service} healthy`);
    }
    await until(
      async () => {
        const { stdout, stderr } = await podman(["logs", container("balancer")]);
        const last = (server: string): string | undefined => [...(stdout + stderr).matchAll(new RegExp(`Server wiretap/${server} is (UP|DOWN)`, "g"))].at(-1)?.[1];
        return last("a") !== "DOWN" && last("b") !== "DOWN";
      },
      30_000,
      () => "HAProxy counting both replicas up",
    );
  }, 420_000);

  afterAll(async () => {
    await podman(["rm", "-f", "-t", "0", UPSTREAM]).catch(() => undefined);
    if (composeArgs) await compose(["down", "-v"]).catch((err: Error) => console.warn(err.message));
    await podman(["network", "rm", "-f", NETWORK]).catch(() => undefined);
    await podman(["rmi", "-f", `${PROJECT}_wiretap-a`, `${PROJECT}_wiretap-b`]).catch(() => undefined);
    if (madeCa) rmSync(CA_DIR, { recursive: true, force: true });
    if (dir) rmSync(dir, { recursive: true, force: true });
  }, 120_000);

  async function replicaRecords(service: string): Promise<LogRecord[]> {
    // From the replica's volume (read on the host: a stopped replica's too).
    const { stdout: mountpoint } = await podman(["volume", "inspect", "--format", "{{.Mountpoint}}", `${PROJECT}_logs-${service.slice(-1)}`]);
    const file = path.join(mountpoint.trim(), "mcp-wiretap.ndjson");
    return (existsSync(file) ? readFileSync(file, "utf8") : "").split("\n").filter(Boolean).map((line) => JSON.parse(line) as LogRecord);
  }

  const server = (): string => `upstream.test:${UPSTREAM_PORT}`;

  /** One MCP session through the balancer: tools/list, then one echo call; how the call ended. */
  async function session(message: string): Promise<string> {
    const c = await connectStreamable(`https://${server()}/mcp`, { proxyUrl: `http://${CREDENTIALS}@127.0.0.1:8080`, caPem });
    try {
      expect((await c.client.listTools()).tools.map((t) => t.name)).toContain("echo");
      return await c.client.callTool({ name: "echo", arguments: { message } }).then(
        (r) => (JSON.stringify(r.content).includes(message) ? "echoed" : JSON.stringify(r)),
        (err: Error) => (/blocked by mcp-wiretap policy/.test(err.message) ? "denied" : err.message),
      );
    } finally {
      await c.close();
    }
  }

  async function callsOn(service: string): Promise<LogRecord[]> {
    return (await replicaRecords(service)).filter((r) => r.event === "rpc" && r.kind === "request" && r.method === "tools/call" && r.server === server());
  }

  it("keeps a client on one replica, fails over to the other when it stops, and holds the limit and pins in Redis across both", async () => {
    const outcomes: string[] = [];
    for (let i = 0; i < 5; i++) outcomes.push(await session(`call ${i}`));
    expect(outcomes).toEqual(["echoed", "echoed", "echoed", "echoed", "echoed"]);
    // Client affinity (balance source): this client's five sessions all went to one replica.
    const counts = await Promise.all(["wiretap-a", "wiretap-b"].map(async (s) => (await callsOn(s)).length));
    expect(counts.slice().sort(), `tools/call records on a and b: ${counts.join(", ")}`).toEqual([0, 5]);
    const [first, second] = counts[0] === 5 ? ["wiretap-a", "wiretap-b"] : ["wiretap-b", "wiretap-a"];
    await podman(["stop", "-t", "10", container(first!)], 60_000);
    // The next session reaches the other replica (a refused connection is redispatched at once), which
    // denies the sixth tools/call of the minute: the counter is the shared one.
    expect(await session("call 5")).toBe("denied");
    const calls = await callsOn(second!);
    expect(calls.map((r) => (r.decision as { action: string }).action)).toEqual(["deny"]);
    const { stdout } = await podman(["exec", container("redis"), "redis-cli", "--scan", "--pattern", "mcp-wiretap:*"]);
    const keys = stdout.split("\n").filter(Boolean);
    expect(keys.some((k) => k.startsWith("mcp-wiretap:rate:")), keys.join(" ")).toBe(true);
    expect(keys.some((k) => k.startsWith("mcp-wiretap:pins:")), keys.join(" ")).toBe(true);
  }, 120_000);

  it("exports traces and metrics to the OTLP receiver in the Collector's place (the last metrics at stop)", async () => {
    await podman(["stop", "-t", "10", container("wiretap-a"), container("wiretap-b")], 60_000); // one is stopped already
    let lines: { signal: string; bytes: number; service_seen: boolean }[] = [];
    await until(
      async () => {
        const { stdout } = await podman(["logs", container("otel-collector")]);
        lines = stdout.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as (typeof lines)[number]);
        return ["traces", "metrics"].every((s) => lines.some((l) => l.signal === s && l.bytes > 0 && l.service_seen));
      },
      20_000,
      () => `traces and metrics from service mcp-wiretap in the sink's output: ${JSON.stringify(lines)}`,
    );
  }, 60_000);

  it("is torn down by podman-compose down -v, leaving no container, volume or network", async () => {
    await podman(["rm", "-f", "-t", "0", UPSTREAM]); // the test's own, not the Compose project's
    await compose(["down", "-v"]);
    await podman(["network", "rm", "-f", NETWORK]).catch(() => undefined);
    expect(await leftovers()).toEqual([]);
  }, 120_000);
});
