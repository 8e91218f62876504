/**
 * `mcp-wiretap env`: the settings as shell commands. The sh output is evaluated by a real `sh` and used by
 * curl (and Node 20) against a running proxy; fish and PowerShell output are checked as text (and by fish
 * itself when it is installed). Needs `npm run build`.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  applySettings,
  cleanNoProxy,
  clientSettings,
  preloadImportUrl,
  proxyUrlFor,
  quoteFish,
  quotePowerShell,
  quoteSh,
  renderSettings,
  withCredentials,
  withPreload,
} from "../../src/cli/client-env.js";
import { startHttpsUpstream, type TestUpstream } from "../helpers/https-upstream.js";
import { assertBuilt, CLI_MAIN, NODE_BIN, startTestProxy, type TestProxy } from "../helpers/proxy-harness.js";
import { skipNote } from "../helpers/skip-note.js";

const SYSTEM_NODE = "/usr/bin/node";
const CURL = "/usr/bin/curl";
const FISH = ["/usr/bin/fish", "/bin/fish"].find((f) => existsSync(f));

const SCRUBBED = [
  "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy",
  "NODE_USE_ENV_PROXY", "NODE_OPTIONS", "NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
];

function shell(bin: string, script: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const base = { ...process.env };
  for (const name of SCRUBBED) delete base[name];
  return new Promise((resolve) => {
    const child = execFile(bin, ["-c", script], { env: { ...base, ...env }, timeout: 20_000 }, (_err, stdout, stderr) =>
      resolve({ code: child.exitCode, stdout: String(stdout), stderr: String(stderr) }),
    );
  });
}

const q = quoteSh;

skipNote(import.meta.url, !FISH, "fish is not installed");
skipNote(import.meta.url, !existsSync(CURL), "curl is not installed");
skipNote(import.meta.url, !existsSync(SYSTEM_NODE), "no system Node 20 to test the preload on");
describe("unit: client settings", () => {
  it("NO_PROXY loses its loopback entries and keeps the rest", () => {
    expect(cleanNoProxy("localhost,127.0.0.1,::1,[::1],.localhost,*.localhost,127.0.0.53,127.0.0.0/8,localhost:8080,example.com, .corp.example")).toBe(
      "example.com,.corp.example",
    );
    expect(cleanNoProxy("a.example b.example", "b.example,localhost,c.example")).toBe("a.example,b.example,c.example");
    expect(cleanNoProxy("127.example.com,my-localhost.example")).toBe("127.example.com,my-localhost.example");
    expect(cleanNoProxy(undefined)).toBe("");
  });

  it("the preload is appended to NODE_OPTIONS once", () => {
    const url = preloadImportUrl();
    expect(url).toMatch(/^file:\/\/\/.*\/dist\/preload\/env-proxy\.js$/);
    expect(withPreload(undefined)).toBe(`--import ${url}`);
    expect(withPreload("--max-old-space-size=512")).toBe(`--max-old-space-size=512 --import ${url}`);
    expect(withPreload(withPreload("--trace-warnings"))).toBe(`--trace-warnings --import ${url}`);
  });

  it("proxy URLs carry encoded credentials and loopback for wildcard listeners", () => {
    expect(proxyUrlFor({ host: "127.0.0.1", port: 8080 })).toBe("http://127.0.0.1:8080");
    expect(proxyUrlFor({ host: "0.0.0.0", port: 1 })).toBe("http://127.0.0.1:1");
    expect(proxyUrlFor({ host: "::1", port: 2 })).toBe("http://[::1]:2");
    expect(proxyUrlFor({ host: "127.0.0.1", port: 3 }, "us er:p@ss:w/rd")).toBe("http://us%20er:p%40ss%3Aw%2Frd@127.0.0.1:3");
    expect(withCredentials("http://127.0.0.1:8080", "us er:p@ss:w/rd")).toBe("http://us%20er:p%40ss%3Aw%2Frd@127.0.0.1:8080");
    expect(withCredentials("http://a:b@127.0.0.1:8080", "c:d")).toBe("http://a:b@127.0.0.1:8080");
    expect(withCredentials("http://127.0.0.1:8080", undefined)).toBe("http://127.0.0.1:8080");
  });

  it("settings: proxies, trust, NO_PROXY only when set, removed when emptied", () => {
    const input = { proxyUrl: "http://127.0.0.1:9", caCertPath: "/ca/ca.pem", bundlePath: "/ca/bundle.pem" };
    const names = clientSettings(input, {}).map(([name]) => name);
    expect(names).toEqual([
      "HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy",
      "NODE_USE_ENV_PROXY", "NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_OPTIONS",
    ]);
    const env = applySettings({ NO_PROXY: "localhost", KEEP: "x" }, clientSettings(input, { NO_PROXY: "localhost" }));
    expect(env.NO_PROXY).toBeUndefined();
    expect(env.no_proxy).toBeUndefined();
    expect(env.KEEP).toBe("x");
    expect(env.SSL_CERT_FILE).toBe("/ca/bundle.pem");
    expect(clientSettings({ ...input, preload: false }, {}).some(([name]) => name === "NODE_OPTIONS")).toBe(false);
  });

  it("quotes for each shell", () => {
    const nasty = `a'b\\c"d$e\`f ‘g’`;
    expect(quoteSh(nasty)).toBe(`'a'\\''b\\c"d$e\`f ‘g’'`);
    expect(quoteFish(nasty)).toBe(`'a\\'b\\\\c"d$e\`f ‘g’'`);
    expect(quotePowerShell(nasty)).toBe(`'a''b\\c"d$e\`f ‘‘g’’'`);
    const settings: [string, string | null][] = [["HTTPS_PROXY", nasty], ["NO_PROXY", null]];
    expect(renderSettings("sh", settings)).toBe(`export HTTPS_PROXY=${quoteSh(nasty)}\nunset NO_PROXY\n`);
    expect(renderSettings("fish", settings)).toBe(`set -gx HTTPS_PROXY ${quoteFish(nasty)}\nset -e NO_PROXY\n`);
    expect(renderSettings("powershell", settings)).toBe(
      `$env:HTTPS_PROXY = ${quotePowerShell(nasty)}\nRemove-Item -ErrorAction SilentlyContinue Env:NO_PROXY\n`,
    );
  });
});

describe("mcp-wiretap env", () => {
  let dir: string;
  let proxy: TestProxy;
  let upstream: TestUpstream;
  let client: string;
  const body = JSON.stringify({ jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "from-shell", arguments: {} } });
  const env = (...args: string[]) => [NODE_BIN, CLI_MAIN, "env", ...args].map(q).join(" ");

  beforeAll(async () => {
    assertBuilt();
    dir = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-env-test-"));
    proxy = await startTestProxy();
    upstream = await startHttpsUpstream();
    client = path.join(dir, "client.mjs");
    await writeFile(
      client,
      `const res = await fetch(process.argv[2], { method: "POST", headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }, body: ${JSON.stringify(body)} });
process.stdout.write(res.status + " " + (await res.text()) + "\\n");\n`,
    );
  });

  afterAll(async () => {
    await proxy?.stop();
    await upstream?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it.skipIf(!existsSync(CURL))("sh: eval'd output sends curl through the running proxy, trusting its CA", async () => {
    const script = [
      `eval "$(${env("--proxy", proxy.url, "--ca-dir", proxy.caDir)})"`,
      `curl -sS -X POST -H 'content-type: application/json' -H 'accept: application/json, text/event-stream' --data ${q(body)} ${q(`${upstream.url}/mcp-json`)}`,
      `echo`,
      `printf '%s\\n' "$NO_PROXY|$no_proxy"`,
    ].join("\n");
    const result = await shell("/bin/sh", script, { NO_PROXY: "localhost,127.0.0.1,::1,odd'name.example" });
    expect(result.code, result.stderr).toBe(0);
    const [answer, noProxy] = result.stdout.split("\n");
    expect(answer).toBe('{"jsonrpc":"2.0","id":5,"result":{"ok":true}}');
    expect(noProxy).toBe("odd'name.example|odd'name.example");
    const record = await proxy.waitForRecord((r) => r.event === "rpc" && r.tool === "from-shell", { what: "curl's tools/call" });
    expect(record).toMatchObject({ server: `127.0.0.1:${upstream.port}`, kind: "request" });
  });

  it.skipIf(!existsSync(SYSTEM_NODE))("sh: a Node 20 client started after the eval goes through the proxy (preload)", async () => {
    const script = [
      `eval "$(${env("--proxy", proxy.url, "--ca-dir", proxy.caDir)})"`,
      `eval "$(${env("--proxy", proxy.url, "--ca-dir", proxy.caDir)})"`, // twice: harmless
      `printf '%s\\n' "$NODE_OPTIONS"`,
      `${q(SYSTEM_NODE)} ${q(client)} ${q(`${upstream.url}/mcp-json`)}`,
    ].join("\n");
    const result = await shell("/bin/sh", script, { NODE_OPTIONS: "--max-old-space-size=300" });
    expect(result.code, result.stderr).toBe(0);
    const [nodeOptions, answer] = result.stdout.split("\n");
    expect(nodeOptions).toBe(`--max-old-space-size=300 --import ${preloadImportUrl()}`);
    expect(answer).toMatch(/^200 .*"id":5/);
    await proxy.waitForRecords((r) => r.event === "rpc" && r.tool === "from-shell" && r.kind === "request", 2, { what: "two tools/call records" });
  });

  it("with a new CA, the note on stderr names the proxy without its credentials; a bad --proxy-auth is said", async () => {
    const fresh = await shell("/bin/sh", env("--proxy", "http://alice:s3cret-pw@127.0.0.1:9", "--ca-dir", path.join(dir, "fresh-ca"), "--create-ca"), {});
    expect(fresh.code, fresh.stderr).toBe(0);
    expect(fresh.stderr).toContain("the proxy at http://[redacted]@127.0.0.1:9 must use this --ca-dir");
    expect(fresh.stderr).toContain("warning: nothing answers at http://[redacted]@127.0.0.1:9");
    expect(fresh.stderr).not.toContain("s3cret-pw");
    const bad = await shell("/bin/sh", env("--proxy-auth", "alice", "--ca-dir", proxy.caDir), {});
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--proxy-auth must be user:password");
  });

  it("defaults to sh syntax and http://127.0.0.1:8080; fish and PowerShell output is well-formed", async () => {
    const run = (args: string[]) => shell("/bin/sh", `${env(...args)}`, { NO_PROXY: "localhost,it's.example" });
    const sh = await run(["--ca-dir", proxy.caDir]);
    expect(sh.code, sh.stderr).toBe(0);
    const shLines = sh.stdout.trimEnd().split("\n");
    expect(shLines[0]).toMatch(/^# /);
    expect(shLines).toContain("export HTTPS_PROXY='http://127.0.0.1:8080'");
    expect(shLines).toContain(`export NO_PROXY='it'\\''s.example'`);
    expect(shLines).toContain(`export NODE_EXTRA_CA_CERTS=${q(proxy.caCertPath)}`);
    for (const line of shLines.slice(1)) expect(line).toMatch(/^export [A-Za-z_]+='([^']|'\\'')*'$/);

    const fish = await run(["--shell", "fish", "--proxy", proxy.url, "--ca-dir", proxy.caDir]);
    expect(fish.code, fish.stderr).toBe(0);
    const fishLines = fish.stdout.trimEnd().split("\n");
    for (const line of fishLines.slice(1)) expect(line).toMatch(/^set -gx [A-Za-z_]+ '([^'\\]|\\['\\])*'$/);
    expect(fishLines).toContain(`set -gx HTTPS_PROXY '${proxy.url}'`);
    expect(fishLines).toContain(`set -gx NO_PROXY 'it\\'s.example'`);
    expect(fishLines).toContain(`set -gx NODE_OPTIONS '--import ${preloadImportUrl()}'`);

    const ps = await run(["--shell", "powershell", "--proxy", proxy.url, "--ca-dir", proxy.caDir]);
    expect(ps.code, ps.stderr).toBe(0);
    const psLines = ps.stdout.trimEnd().split("\n");
    for (const line of psLines.slice(1)) expect(line).toMatch(/^\$env:[A-Za-z_]+ = '([^']|'')*'$/);
    expect(psLines).toContain(`$env:NO_PROXY = 'it''s.example'`);
    expect(psLines).toContain(`$env:NODE_USE_ENV_PROXY = '1'`);

    const bad = await run(["--shell", "tcsh"]);
    expect(bad.code).toBe(2);
  });

  it.skipIf(!FISH)("fish: the output sets the variables when sourced", async () => {
    const script = `${env("--shell", "fish", "--proxy", proxy.url, "--ca-dir", proxy.caDir)} | source; printf '%s\\n' $NO_PROXY $HTTPS_PROXY`;
    const result = await shell(FISH!, script, { NO_PROXY: "localhost,it's\\odd.example" });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(`it's\\odd.example\n${proxy.url}\n`);
  });
});
