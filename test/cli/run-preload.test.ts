/**
 * The Node 20/22 preload (dist/preload/env-proxy.js) on its own: the system Node 20 with the environment
 * `run` and `env` give, against a proxy started in this process. Needs `npm run build`.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { preloadImportUrl, PRELOAD_FILE } from "../../src/cli/client-env.js";
import { nativeEnvProxy } from "../../src/preload/install.js";
import { bypassesProxy, parseNoProxy } from "../../src/preload/no-proxy.js";
import { startHttpsUpstream, startHttpUpstream, type TestUpstream } from "../helpers/https-upstream.js";
import { skipNote } from "../helpers/skip-note.js";
import { NODE_BIN, startTestProxy, testCaFile, type TestProxy } from "../helpers/proxy-harness.js";

const SYSTEM_NODE = "/usr/bin/node";
const hasSystemNode = existsSync(SYSTEM_NODE);

const CLIENT = `
import http from "node:http";
import https from "node:https";
const [url, mode] = process.argv.slice(2);
const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "probe", arguments: {} } });
const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" };
if (mode === "fetch") {
  const res = await fetch(url, { method: "POST", headers, body });
  process.stdout.write(res.status + " " + (await res.text()) + "\\n");
} else {
  const mod = url.startsWith("https:") ? https : http;
  await new Promise((resolve, reject) => {
    const req = mod.request(url, { method: "POST", headers }, (res) => {
      let t = "";
      res.on("data", (c) => (t += c));
      res.on("end", () => { process.stdout.write(res.statusCode + " " + t + "\\n"); resolve(); });
    });
    req.on("error", reject);
    req.end(body);
  });
}
`;

function node(bin: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const base = { ...process.env };
  for (const name of ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy", "NODE_OPTIONS", "NODE_USE_ENV_PROXY", "NODE_EXTRA_CA_CERTS"]) {
    delete base[name];
  }
  return new Promise((resolve) => {
    const child = execFile(bin, args, { env: { ...base, ...env }, timeout: 15_000 }, (_err, stdout, stderr) =>
      resolve({ code: child.exitCode, stdout: String(stdout), stderr: String(stderr) }),
    );
  });
}

skipNote(import.meta.url, !hasSystemNode, "no system Node 20 to test the preload on");
describe("unit: NO_PROXY matching and version gates", () => {
  it("matches names, subdomains, ports, IPv6 and *", () => {
    const list = parseNoProxy("example.com, .corp.example *.wild.example,10.0.0.1:8443 [::1]:9000 ,");
    expect(bypassesProxy(list, "example.com", 443)).toBe(true);
    expect(bypassesProxy(list, "api.example.com", 443)).toBe(true);
    expect(bypassesProxy(list, "notexample.com", 443)).toBe(false);
    expect(bypassesProxy(list, "corp.example", 80)).toBe(true);
    expect(bypassesProxy(list, "a.wild.example", 80)).toBe(true);
    expect(bypassesProxy(list, "10.0.0.1", 8443)).toBe(true);
    expect(bypassesProxy(list, "10.0.0.1", 443)).toBe(false);
    expect(bypassesProxy(list, "[::1]", 9000)).toBe(true);
    expect(bypassesProxy(list, "::1", 9001)).toBe(false);
    expect(bypassesProxy(parseNoProxy("*"), "anything", 1)).toBe(true);
    expect(bypassesProxy(parseNoProxy(undefined), "anything", 1)).toBe(false);
  });

  it("knows which Node versions have NODE_USE_ENV_PROXY for fetch and http", () => {
    expect(nativeEnvProxy("20.20.2")).toEqual({ fetch: false, http: false });
    expect(nativeEnvProxy("22.20.0")).toEqual({ fetch: false, http: false });
    expect(nativeEnvProxy("22.21.0")).toEqual({ fetch: true, http: true });
    expect(nativeEnvProxy("24.0.0")).toEqual({ fetch: true, http: false });
    expect(nativeEnvProxy("24.5.0")).toEqual({ fetch: true, http: true });
    expect(nativeEnvProxy("26.1.0")).toEqual({ fetch: true, http: true });
  });
});

describe("the preload", () => {
  let dir: string;
  let client: string;
  let proxy: TestProxy;
  let tlsUpstream: TestUpstream;
  let plainUpstream: TestUpstream;

  beforeAll(async () => {
    if (!existsSync(PRELOAD_FILE)) throw new Error(`${PRELOAD_FILE} is missing: run \`npm run build\` first`);
    dir = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-preload-test-"));
    client = path.join(dir, "client.mjs");
    await writeFile(client, CLIENT);
    proxy = await startTestProxy();
    tlsUpstream = await startHttpsUpstream();
    plainUpstream = await startHttpUpstream();
  });

  afterAll(async () => {
    await proxy?.stop();
    await tlsUpstream?.close();
    await plainUpstream?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const proxied = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
    HTTPS_PROXY: proxy.url,
    HTTP_PROXY: proxy.url,
    NODE_USE_ENV_PROXY: "1",
    NODE_EXTRA_CA_CERTS: proxy.caCertPath,
    NODE_OPTIONS: `--import ${preloadImportUrl()}`,
    MCP_WIRETAP_PRELOAD_DEBUG: "1",
    ...extra,
  });

  it.skipIf(!hasSystemNode)("on Node 20: installs both, and plain-http targets go through CONNECT too", async () => {
    for (const mode of ["fetch", "http"]) {
      const result = await node(SYSTEM_NODE, [client, `${plainUpstream.url}/mcp-json`, mode], proxied());
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toMatch(/mcp-wiretap preload \(node 20\.[\d.]+\): fetch installed, http installed/);
      expect(result.stdout).toMatch(/^200 /);
    }
    const records = await proxy.waitForRecords((r) => r.event === "rpc" && r.kind === "request" && r.server === `127.0.0.1:${plainUpstream.port}`, 2);
    expect(records).toHaveLength(2);
  });

  it.skipIf(!hasSystemNode)("on Node 20: NO_PROXY hosts are reached directly", async () => {
    const target = `127.0.0.1:${tlsUpstream.port}`;
    for (const mode of ["fetch", "http"]) {
      // Direct, so the client must trust the upstream's own CA.
      const result = await node(SYSTEM_NODE, [client, `${tlsUpstream.url}/mcp-json`, mode], proxied({ NO_PROXY: `example.org,${target}`, NODE_EXTRA_CA_CERTS: testCaFile() }));
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toMatch(/^200 /);
    }
    expect((await proxy.records()).filter((r) => r.server === target)).toEqual([]);
  });

  it.skipIf(!hasSystemNode)("on Node 20: a bad proxy setting is one line on stderr, never a crash", async () => {
    const result = await node(SYSTEM_NODE, ["-e", "console.log('still runs')"], proxied({ HTTPS_PROXY: "not a url" }));
    expect(result.code).toBe(0);
    expect(result.stdout).toBe("still runs\n");
    expect(result.stderr).toMatch(/mcp-wiretap preload: proxy settings not applied: HTTPS_PROXY=not a url is not a URL/);
  });

  it.skipIf(!hasSystemNode)("on Node 20: a refused proxy setting is said without the credentials it carries", async () => {
    const result = await node(SYSTEM_NODE, ["-e", "console.log('still runs')"], proxied({ HTTPS_PROXY: "socks5://alice:s3cret-pw@127.0.0.1:1080" }));
    expect(result.code).toBe(0);
    expect(result.stderr).toContain("HTTPS_PROXY=socks5://[redacted]@127.0.0.1:1080: only http:// and https:// proxies are supported");
    expect(result.stderr).not.toContain("s3cret-pw");
  });

  it("on Node 24 it does nothing (NODE_USE_ENV_PROXY is native), and nothing anywhere without NODE_USE_ENV_PROXY=1", async () => {
    const native = await node(NODE_BIN, [client, `${tlsUpstream.url}/mcp-json`, "fetch"], proxied());
    expect(native.code, native.stderr).toBe(0);
    expect(native.stderr).toMatch(/fetch native, http native/);
    const off = await node(hasSystemNode ? SYSTEM_NODE : NODE_BIN, ["-e", "0"], proxied({ NODE_USE_ENV_PROXY: "" }));
    expect(off.stderr).toMatch(/fetch off, http off/);
  });
});
