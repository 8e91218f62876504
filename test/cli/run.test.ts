/**
 * `mcp-wiretap run`: the built CLI runs a client (Node 20 from /usr/bin/node, and the project's Node 24)
 * that has no proxy settings of its own; its MCP traffic must show up in the records. Needs `npm run build`.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startHttpsUpstream, type TestUpstream } from "../helpers/https-upstream.js";
import { assertBuilt, CLI_MAIN, NODE_BIN, readRecords, REPO_ROOT, startTestProxy, testCaFile, type LogRecord } from "../helpers/proxy-harness.js";
import { skipNote } from "../helpers/skip-note.js";

const SYSTEM_NODE = "/usr/bin/node";
const hasSystemNode = existsSync(SYSTEM_NODE);
const PYTHON = ["/usr/bin/python3", "/usr/local/bin/python3"].find((p) => existsSync(p));

/** Variables a developer's shell may carry that would change what the child does. */
const SCRUBBED = [
  "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy",
  "NODE_USE_ENV_PROXY", "NODE_OPTIONS", "NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
  "MCP_WIRETAP_PROXY_AUTH", "SSLKEYLOGFILE",
];

function scrubbedEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of SCRUBBED) delete env[name];
  return { ...env, ...extra };
}

interface Result {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** `node dist/cli/main.js ...args` with a controlled environment; `onStdout` sees output as it comes. */
function wiretap(
  args: string[],
  { env = {}, timeoutMs = 20_000, onSpawn }: { env?: NodeJS.ProcessEnv; timeoutMs?: number; onSpawn?: (child: ReturnType<typeof spawn>, out: () => string) => void } = {},
): Promise<Result> {
  assertBuilt();
  return new Promise((resolve, reject) => {
    const child = spawn(NODE_BIN, [CLI_MAIN, ...args], { cwd: REPO_ROOT, env: scrubbedEnv(env), stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c.toString()));
    child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`mcp-wiretap ${args.join(" ")} still running after ${timeoutMs} ms\nstdout:\n${stdout}\nstderr:\n${stderr}`));
    }, timeoutMs);
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
    onSpawn?.(child, () => stdout);
  });
}

const CLIENT = `
import https from "node:https";
const [url, mode = "fetch"] = process.argv.slice(2);
const body = JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "echo", arguments: { text: "hello" } } });
const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
let status, text;
if (mode === "fetch") {
  const res = await fetch(url, { method: "POST", headers, body });
  status = res.status;
  text = await res.text();
} else {
  ({ status, text } = await new Promise((resolve, reject) => {
    const req = https.request(url, { method: "POST", headers }, (res) => {
      let t = "";
      res.setEncoding("utf8");
      res.on("data", (c) => (t += c));
      res.on("end", () => resolve({ status: res.statusCode, text: t }));
    });
    req.on("error", reject);
    req.end(body);
  }));
}
process.stdout.write(status + " " + text + "\\n");
`;

const WAIT_FOR_TERM = `
for (const signal of ["SIGTERM", "SIGINT"]) process.on(signal, () => { process.stdout.write("got " + signal + "\\n"); process.exit(42); });
process.stdout.write("ready\\n");
setInterval(() => {}, 1000);
`;

skipNote(import.meta.url, !PYTHON, "python3 is not installed");
skipNote(import.meta.url, !hasSystemNode, "no system Node 20 to test the preload on");
describe("mcp-wiretap run", () => {
  let dir: string;
  let caDir: string;
  let upstreamCa: string;
  let upstream: TestUpstream;
  let client: string;
  let url: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-run-test-"));
    caDir = path.join(dir, "ca");
    upstreamCa = testCaFile();
    upstream = await startHttpsUpstream();
    url = `${upstream.url}/mcp-json`;
    client = path.join(dir, "client.mjs");
    await writeFile(client, CLIENT);
    await writeFile(path.join(dir, "wait-for-term.mjs"), WAIT_FOR_TERM);
  });

  afterAll(async () => {
    await upstream?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const server = () => `127.0.0.1:${upstream.port}`;

  function expectMcpRecords(records: LogRecord[]): void {
    const http = records.find((r) => r.event === "http" && r.server === server());
    expect(http, JSON.stringify(records, null, 1)).toBeDefined();
    const request = records.find((r) => r.event === "rpc" && r.kind === "request" && r.method === "tools/call" && r.server === server());
    expect(request, JSON.stringify(records, null, 1)).toMatchObject({ id: 7, direction: "client_to_server", tool: "echo" });
    expect(records.find((r) => r.event === "rpc" && r.kind === "response" && r.id === 7)).toBeDefined();
    expect(records.at(-1)?.event).toBe("stop");
  }

  async function runClient(node: string, mode: "fetch" | "https", extraArgs: string[] = []): Promise<{ result: Result; records: LogRecord[] }> {
    const logFile = path.join(dir, `log-${path.basename(node)}-${mode}-${Date.now()}.ndjson`);
    const result = await wiretap(["run", "--ca-dir", caDir, "--upstream-ca", upstreamCa, "--log-file", logFile, ...extraArgs, "--", node, client, url, mode]);
    return { result, records: await readRecords(logFile) };
  }

  it.skipIf(!hasSystemNode)("Node 20 fetch with no proxy code of its own goes through the embedded proxy (preload)", async () => {
    const { result, records } = await runClient(SYSTEM_NODE, "fetch");
    expect(result.stderr).not.toMatch(/preload: proxy settings not applied/);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('200 {"jsonrpc":"2.0","id":7,"result":{"ok":true}}\n');
    expectMcpRecords(records);
  });

  it.skipIf(!hasSystemNode)("Node 20 https.request goes through the embedded proxy (preload's globalAgent)", async () => {
    const { result, records } = await runClient(SYSTEM_NODE, "https");
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^200 .*"ok":true/);
    expectMcpRecords(records);
  });

  it("Node 24 fetch and https.request go through it (NODE_USE_ENV_PROXY)", async () => {
    for (const mode of ["fetch", "https"] as const) {
      const { result, records } = await runClient(NODE_BIN, mode);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toMatch(/^200 .*"ok":true/);
      expectMcpRecords(records);
    }
  });

  it.skipIf(!PYTHON)("Python (urllib: HTTPS_PROXY, and SSL_CERT_FILE = system roots + our CA) goes through it", async () => {
    const script = [
      "import json, sys, urllib.request",
      "body = json.dumps({'jsonrpc': '2.0', 'id': 7, 'method': 'tools/call', 'params': {'name': 'echo', 'arguments': {}}}).encode()",
      "req = urllib.request.Request(sys.argv[1], data=body, headers={'content-type': 'application/json', 'accept': 'application/json, text/event-stream'})",
      "print(urllib.request.urlopen(req, timeout=10).read().decode())",
    ].join("\n");
    const logFile = path.join(dir, "log-python.ndjson");
    const result = await wiretap(["run", "--ca-dir", caDir, "--upstream-ca", upstreamCa, "--log-file", logFile, "--", PYTHON!, "-c", script, url]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/"ok": ?true/);
    expectMcpRecords(await readRecords(logFile));
  });

  it("without --log-file, records go to stderr and the command's stdout is untouched", async () => {
    const result = await wiretap(["run", "--ca-dir", caDir, "--upstream-ca", upstreamCa, "--", NODE_BIN, client, url]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('200 {"jsonrpc":"2.0","id":7,"result":{"ok":true}}\n');
    const records = result.stderr
      .split("\n")
      .filter((line) => line.startsWith("{"))
      .map((line) => JSON.parse(line) as LogRecord);
    expectMcpRecords(records);
  });

  it("credentials of --proxy-auth are handed to the command in the proxy URL (embedded and attached)", async () => {
    for (const node of hasSystemNode ? [SYSTEM_NODE, NODE_BIN] : [NODE_BIN]) {
      const { result, records } = await runClient(node, "fetch", ["--proxy-auth", "wire tap:p@ss:w/rd"]);
      expect(result.code, result.stderr).toBe(0);
      expect(records.filter((r) => r.event === "refused")).toEqual([]);
      expectMcpRecords(records);
    }
    const proxy = await startTestProxy({ proxyAuth: "u:secret" });
    try {
      const denied = await wiretap(["run", "--proxy", proxy.url, "--ca-dir", proxy.caDir, "--", NODE_BIN, client, url]);
      expect(denied.code).not.toBe(0);
      const allowed = await wiretap(["run", "--proxy", proxy.url, "--ca-dir", proxy.caDir, "--", NODE_BIN, client, url], {
        env: { MCP_WIRETAP_PROXY_AUTH: "u:secret" },
      });
      expect(allowed.code, allowed.stderr).toBe(0);
      await proxy.waitForRecord((r) => r.event === "rpc" && r.method === "tools/call", { what: "tools/call record" });
    } finally {
      await proxy.stop();
    }
  });

  it("exits with the command's exit code, 128+n for a signal, 127 when it is not found", async () => {
    const three = await wiretap(["run", "--ca-dir", caDir, "--", NODE_BIN, "-e", "process.exit(3)"]);
    expect(three.code).toBe(3);
    const killed = await wiretap(["run", "--ca-dir", caDir, "--", NODE_BIN, "-e", "process.kill(process.pid, 'SIGTERM')"]);
    expect(killed.code).toBe(128 + 15);
    const missing = await wiretap(["run", "--ca-dir", caDir, "--", "mcp-wiretap-no-such-command"]);
    expect(missing.code).toBe(127);
    expect(missing.stderr).toContain("mcp-wiretap: cannot run mcp-wiretap-no-such-command: command not found");
  });

  it("passes SIGTERM and SIGINT on to the command, then stops the proxy with its records flushed", async () => {
    for (const signal of ["SIGTERM", "SIGINT"] as const) {
      const logFile = path.join(dir, `log-${signal}.ndjson`);
      const result = await wiretap(["run", "--ca-dir", caDir, "--log-file", logFile, "--", NODE_BIN, path.join(dir, "wait-for-term.mjs")], {
        onSpawn(child, out) {
          const poll = setInterval(() => {
            if (out().includes("ready")) {
              clearInterval(poll);
              child.kill(signal);
            }
          }, 20);
          child.once("close", () => clearInterval(poll));
        },
      });
      expect(result.stdout).toBe(`ready\ngot ${signal}\n`);
      expect(result.code).toBe(42);
      const records = await readRecords(logFile);
      expect(records.at(-1)).toMatchObject({ event: "stop", reason: "command exited" });
    }
  });

  it("--proxy attaches to a running proxy (CA from --ca-dir) and passes clean settings to the command", async () => {
    const proxy = await startTestProxy();
    try {
      const node = hasSystemNode ? SYSTEM_NODE : NODE_BIN;
      const result = await wiretap(["run", "--proxy", proxy.url, "--ca-dir", proxy.caDir, "--", node, client, url]);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toMatch(/^200 .*"ok":true/);
      await proxy.waitForRecord((r) => r.event === "rpc" && r.method === "tools/call" && r.server === server(), { what: "tools/call record" });

      const dump = await wiretap(["run", "--proxy", proxy.url, "--ca-dir", proxy.caDir, "--", NODE_BIN, "-e", "console.log(JSON.stringify(process.env))"], {
        env: { NO_PROXY: "localhost,127.0.0.1,::1,.localhost,127.0.0.2,[::1]:8080,internal.example", no_proxy: "corp.example", NODE_OPTIONS: "--max-old-space-size=256" },
      });
      expect(dump.code, dump.stderr).toBe(0);
      const env = JSON.parse(dump.stdout) as Record<string, string>;
      for (const name of ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"]) expect(env[name]).toBe(proxy.url);
      expect(env.NO_PROXY).toBe("internal.example,corp.example");
      expect(env.no_proxy).toBe("internal.example,corp.example");
      expect(env.NODE_USE_ENV_PROXY).toBe("1");
      expect(env.NODE_EXTRA_CA_CERTS).toBe(proxy.caCertPath);
      for (const name of ["SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"]) expect(env[name]).toBe(path.join(proxy.caDir, "bundle.pem"));
      expect(env.NODE_OPTIONS).toMatch(/^--max-old-space-size=256 --import file:\/\/\/\S+\/dist\/preload\/env-proxy\.js$/);

      const bare = await wiretap(["run", "--no-preload", "--proxy", proxy.url, "--ca-dir", proxy.caDir, "--", NODE_BIN, "-e", "console.log(process.env.NODE_OPTIONS ?? '')"]);
      expect(bare.stdout).toBe("\n");
    } finally {
      await proxy.stop();
    }
  });

  it("--proxy with options of the embedded proxy is a usage error", async () => {
    const result = await wiretap(["run", "--proxy", "http://127.0.0.1:9", "--port", "1234", "--log-file", "x.ndjson", "--", NODE_BIN, "-e", "0"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--port, --log-file configure the proxy run starts itself/);
    const bad = await wiretap(["run", "--proxy", "ftp://x", "--", NODE_BIN, "-e", "0"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--proxy/);
  });
});
