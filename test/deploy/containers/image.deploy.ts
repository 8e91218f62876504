/**
 * The shipped Dockerfile's image, run as its header and docs/deploy.md say: published on loopback with
 * proxy credentials and two named volumes. The container reaches the host's loopback (where the test's
 * HTTPS MCP server listens) through slirp4netns at 10.0.2.2, under the name the server's certificate
 * carries (`upstream.test`); the test CA reaches it through NODE_EXTRA_CA_CERTS, so the image's own
 * command line is the one that runs.
 */
import { execFile } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../../helpers/loopback.js";
import { connectSse, connectStreamable } from "../../helpers/mcp-client.js";
import { startMcpUpstream, type McpUpstream } from "../../helpers/mcp-upstream.js";
import type { LogRecord } from "../../helpers/proxy-harness.js";
import { IMAGE, podman, uniqueName, until } from "./podman.js";

const CREDENTIALS = "wiretap:change-me";

describe("the shipped Dockerfile's image", () => {
  const name = uniqueName("image");
  const volumes = { certs: `${name}-certs`, logs: `${name}-logs` };
  let dir: string;
  let port: number;
  let upstream: McpUpstream;
  let readyMs: number;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "mcp-wiretap-image-"));
    upstream = await startMcpUpstream();
    const upstreamCa = path.join(dir, "upstream-ca.pem");
    writeFileSync(upstreamCa, upstream.caPem);
    chmodSync(upstreamCa, 0o644);
    port = await freePort();
    await podman(["volume", "create", volumes.certs]);
    await podman(["volume", "create", volumes.logs]);
    const t0 = Date.now();
    await podman([
      "run", "-d", "--name", name, "--pull=never",
      "--network", "slirp4netns:allow_host_loopback=true", "--add-host", "upstream.test:10.0.2.2",
      "-p", `127.0.0.1:${port}:8080`,
      "-e", `MCP_WIRETAP_PROXY_AUTH=${CREDENTIALS}`,
      "-e", "NODE_EXTRA_CA_CERTS=/etc/mcp-wiretap-test/upstream-ca.pem",
      "-v", `${upstreamCa}:/etc/mcp-wiretap-test/upstream-ca.pem:ro`,
      "-v", `${volumes.certs}:/app/certs`, "-v", `${volumes.logs}:/app/logs`,
      IMAGE,
    ]);
    await until(
      async () => (await request(`http://127.0.0.1:${port}/healthz`, { headersTimeout: 2000 })).statusCode === 200,
      30_000,
      () => "the container's /healthz",
    ).catch(async (err: Error) => {
      const logs = await podman(["logs", name]).catch(() => ({ stdout: "", stderr: "" }));
      throw new Error(`${err.message}\n${logs.stdout}${logs.stderr}`);
    });
    readyMs = Date.now() - t0;
    console.log(`test:deploy: the container answered /healthz ${readyMs} ms after podman run`);
  }, 90_000);

  afterAll(async () => {
    await podman(["rm", "-f", "-t", "2", name]).catch(() => undefined);
    await podman(["volume", "rm", "-f", volumes.certs, volumes.logs]).catch(() => undefined);
    await upstream?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function records(): Promise<LogRecord[]> {
    const { stdout } = await podman(["exec", name, "cat", "/app/logs/mcp-wiretap.ndjson"]);
    return stdout.split("\n").filter(Boolean).map((line) => JSON.parse(line) as LogRecord);
  }

  it("answers /healthz on the published port, runs as uid 1000, and keeps its CA private in the certs volume", async () => {
    const res = await request(`http://127.0.0.1:${port}/healthz`);
    expect(res.statusCode).toBe(200);
    await res.body.dump();
    expect(readyMs).toBeLessThan(30_000);
    const { stdout } = await podman(["exec", name, "sh", "-c", "id -u; stat -c '%a %u' /app/certs /app/certs/ca-key.pem"]);
    expect(stdout.trim().split("\n")).toEqual(["1000", "700 1000", "600 1000"]);
  });

  it("keeps the Dockerfile's HEALTHCHECK, and `podman healthcheck run` passes", async () => {
    const { stdout } = await podman(["container", "inspect", "--format", "{{json .Config.Healthcheck}}", name]);
    const check = JSON.parse(stdout) as { Test: string[]; Interval: number };
    expect(check.Test.join(" ")).toContain("http://127.0.0.1:8080/healthz");
    expect(check.Interval).toBe(30e9);
    // Exit 0 is healthy (podman 4.3 prints nothing then); periodic checks need systemd timers, so run it once.
    await podman(["healthcheck", "run", name]);
    const state = await podman(["container", "inspect", "--format", "{{.State.Health.Status}}", name]);
    expect(state.stdout.trim()).toBe("healthy");
  });

  it("refuses a client without the proxy credentials of MCP_WIRETAP_PROXY_AUTH (407), with real curl", async () => {
    const target = `https://upstream.test:${upstream.port}/mcp`;
    // curl fails (exit 56) when CONNECT is refused, and still prints the proxy's status.
    const connectStatus = (proxy: string): Promise<string> =>
      new Promise((resolve) => {
        execFile("curl", ["-s", "-o", "/dev/null", "-w", "%{http_connect}", "--max-time", "10", "-x", proxy, target], (_err, stdout) => resolve(stdout));
      });
    expect(await connectStatus(`http://127.0.0.1:${port}`)).toBe("407");
    expect(await connectStatus(`http://wiretap:wrong@127.0.0.1:${port}`)).toBe("407");
  });

  it("gives its CA to `podman cp` as docs/deploy.md says (`docker cp wiretap:/app/certs/ca.pem …`)", async () => {
    const out = path.join(dir, "mcp-wiretap-ca.pem");
    await podman(["cp", `${name}:/app/certs/ca.pem`, out]);
    const ca = new X509Certificate(readFileSync(out));
    expect(ca.ca).toBe(true);
    // The key stays inside.
    await expect(podman(["exec", name, "test", "-r", "/app/certs/ca-key.pem"])).resolves.toBeDefined();
  });

  it("carries real MCP sessions (Streamable HTTP and legacy SSE) to an HTTPS server and records every message", async () => {
    const caPem = readFileSync(path.join(dir, "mcp-wiretap-ca.pem"), "utf8");
    const proxyUrl = `http://${CREDENTIALS}@127.0.0.1:${port}`;
    const streamable = await connectStreamable(`https://upstream.test:${upstream.port}/mcp`, { proxyUrl, caPem });
    const sse = await connectSse(`https://upstream.test:${upstream.port}/sse`, { proxyUrl, caPem });
    try {
      for (const { client } of [streamable, sse]) {
        const tools = await client.listTools();
        expect(tools.tools.map((t) => t.name)).toContain("echo");
        const result = await client.callTool({ name: "echo", arguments: { message: "through the container" } });
        expect(JSON.stringify(result.content)).toContain("through the container");
      }
    } finally {
      await Promise.all([streamable.close(), sse.close()]);
    }
    const server = `upstream.test:${upstream.port}`;
    let answers: LogRecord[] = [];
    await until(
      async () => {
        answers = (await records()).filter((r) => r.event === "rpc" && r.kind === "response" && r.tool === "echo" && r.server === server);
        return answers.length === 2;
      },
      10_000,
      () => `two recorded echo answers, have ${answers.length}`,
    );
    expect(answers.map((r) => r.transport).sort()).toEqual(["http+sse", "streamable-http"]);
    for (const answer of answers) {
      expect(answer).toMatchObject({ method: "tools/call", decision: { action: "allow" } });
      expect(typeof answer.latencyMs).toBe("number");
    }
  });
});
