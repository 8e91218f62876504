/**
 * mcp-wiretap with its deployment features on, for the costs docs/deploy.md sizes with: OTLP export to a
 * loopback receiver (in the bench process: it answers 200 and discards), and `--state` on a loopback
 * redis-server with a rate limit that every tools/call request is counted against.
 */
import http from "node:http";
import { writeFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { Child } from "./child.ts";
import { findOnPath, PathUnavailable } from "./paths.ts";
import { waitFor } from "./time.ts";

export interface Extra {
  args: string[];
  stop(): Promise<void>;
}

export async function otlpReceiver(): Promise<Extra> {
  let spans = 0;
  const server = http.createServer((req, res) => {
    req.on("data", () => undefined);
    req.on("end", () => {
      if (req.url === "/v1/traces") spans++;
      res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    args: ["--otlp-endpoint", `http://127.0.0.1:${port}`],
    stop: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      if (spans === 0) process.stderr.write("bench: the OTLP receiver got no span batch\n");
    },
  };
}

const STATE_POLICY = `# bench: every tools/call request is counted in Redis (a limit never reached)
rateLimits:
  - name: bench-shared-counter
    match: { method: tools/call, kind: request }
    perMinute: 1000000000
    per: session
    action: flag
`;

export async function redisState(tmp: string): Promise<Extra> {
  const redis = await startRedisServer();
  const policy = path.join(tmp, "state-policy.yaml");
  writeFileSync(policy, STATE_POLICY);
  return { args: ["--state", `redis://127.0.0.1:${redis.port}/0`, "--config", policy], stop: () => redis.stop() };
}

/** A redis-server on a free loopback port (Redis has no "port 0"). */
export async function startRedisServer(): Promise<{ port: number; stop(): Promise<void> }> {
  if (!findOnPath("redis-server")) throw new PathUnavailable("redis-server is not installed (scripts/ensure-test-deps.sh installs it)");
  const port = await new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const p = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
  const redis = new Child("redis-server", "redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]);
  const ready = await waitFor(() => /Ready to accept connections/.test(redis.stdout), 10_000);
  if (!ready) {
    await redis.stop();
    throw new Error(`redis-server did not start: ${redis.stdout.slice(-500)}`);
  }
  return {
    port,
    stop: async () => {
      await redis.stop();
    },
  };
}
