/**
 * The Dockerfile without a container engine: its steps, read from the Dockerfile itself, run in clean temp
 * folders standing in for the stages' WORKDIR /app.
 *
 * - builder: the build context's files that its COPY lines name (filtered by .dockerignore), then its RUN
 *   lines as written (`npm ci`, `npm run build`, `npm prune --omit=dev`), with the project's Node 24 first on
 *   PATH as in node:24-slim;
 * - runtime: its `COPY --from=builder` and context COPY lines; its RUN lines must only set up folders
 *   (mkdir/chown/chmod, not run here: they need the image's `node` user);
 * - then ENTRYPOINT + `--version`, ENTRYPOINT + CMD (refused without MCP_WIRETAP_PROXY_AUTH; with it, on
 *   loopback and a free port, the HEALTHCHECK command passes and unauthenticated use gets 407).
 *
 * `npm ci` needs the registry: the test is skipped, saying so, when `npm ping` fails.
 */
import { execFile, spawn } from "node:child_process";
import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { cp, mkdir, mkdtemp, rm, symlink } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { closedPort, NODE_BIN, rawProxyExchange, REPO_ROOT } from "../helpers/proxy-harness.js";

const VERSION = (JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as { version: string }).version;

// ---------------------------------------------------------------------------------------------------------
// A small Dockerfile reader: enough for this project's Dockerfile, strict about anything else.

interface Instruction {
  keyword: string;
  args: string;
}

interface Stage {
  name: string;
  base: string;
  instructions: Instruction[];
}

export function parseDockerfile(text: string): Stage[] {
  const logical: string[] = [];
  let pending = "";
  for (const raw of text.split("\n")) {
    const line = raw.trimEnd();
    if (/^\s*#/.test(line)) continue; // comments, also inside continuations
    if (line.endsWith("\\")) {
      pending += `${line.slice(0, -1).trim()} `;
      continue;
    }
    const whole = (pending + line.trim()).trim();
    pending = "";
    if (whole.length > 0) logical.push(whole);
  }
  const stages: Stage[] = [];
  for (const line of logical) {
    const match = /^(\S+)\s*(.*)$/.exec(line)!;
    const keyword = match[1]!.toUpperCase();
    const args = match[2]!;
    if (keyword === "FROM") {
      const from = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(args);
      if (!from) throw new Error(`unexpected FROM ${args}`);
      stages.push({ base: from[1]!, name: from[2] ?? String(stages.length), instructions: [] });
    } else {
      const stage = stages.at(-1);
      if (!stage) throw new Error(`${keyword} before FROM`);
      stage.instructions.push({ keyword, args });
    }
  }
  return stages;
}

function copyArgs(args: string): { from?: string; sources: string[]; dest: string } {
  const tokens = args.split(/\s+/);
  let from: string | undefined;
  while (tokens[0]?.startsWith("--")) {
    const flag = tokens.shift()!;
    if (flag.startsWith("--from=")) from = flag.slice("--from=".length);
    else if (!flag.startsWith("--chown=") && !flag.startsWith("--chmod=")) throw new Error(`COPY flag ${flag} not understood by this test`);
  }
  if (tokens.length < 2 || tokens[0]!.startsWith("[")) throw new Error(`COPY ${args}: use the plain form`);
  return { from, sources: tokens.slice(0, -1), dest: tokens.at(-1)! };
}

/** .dockerignore as Docker reads it: last matching pattern wins, `!` re-includes, a folder covers its contents. */
export function dockerIgnore(text: string): (relative: string) => boolean {
  const rules = text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l.length > 0 && !l.startsWith("#"))
    .map((l) => {
      const negate = l.startsWith("!");
      const pattern = path.posix.normalize(negate ? l.slice(1).trim() : l).replace(/^\/+/, "").replace(/\/+$/, "");
      let source = "";
      for (let i = 0; i < pattern.length; i++) {
        const c = pattern[i]!;
        if (c === "*" && pattern[i + 1] === "*") {
          if (pattern[i + 2] === "/") {
            source += "(?:.*/)?";
            i += 2;
          } else {
            source += ".*";
            i += 1;
          }
        } else if (c === "*") source += "[^/]*";
        else if (c === "?") source += "[^/]";
        else source += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
      }
      return { negate, regex: new RegExp(`^${source}$`) };
    });
  return (relative) => {
    const parts = relative.split("/");
    const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join("/"));
    let excluded = false;
    for (const rule of rules) {
      if (prefixes.some((p) => rule.regex.test(p))) excluded = !rule.negate;
    }
    return excluded;
  };
}

// ---------------------------------------------------------------------------------------------------------

const DOCKERFILE = readFileSync(path.join(REPO_ROOT, "Dockerfile"), "utf8");
const IGNORED = dockerIgnore(readFileSync(path.join(REPO_ROOT, ".dockerignore"), "utf8"));

interface Exec {
  code: number | null;
  stdout: string;
  stderr: string;
}

function sh(command: string, cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<Exec> {
  return new Promise((resolve) => {
    const child = execFile("/bin/sh", ["-c", command], { cwd, env, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (_err, stdout, stderr) =>
      resolve({ code: child.exitCode, stdout: String(stdout), stderr: String(stderr) }),
    );
  });
}

function run(file: string, args: string[], cwd: string, env: NodeJS.ProcessEnv, timeoutMs = 20_000): Promise<Exec> {
  return new Promise((resolve) => {
    const child = execFile(file, args, { cwd, env, timeout: timeoutMs }, (_err, stdout, stderr) =>
      resolve({ code: child.exitCode, stdout: String(stdout), stderr: String(stderr) }),
    );
  });
}

/** Maps a path of the image to the temp folder standing in for WORKDIR. */
function hostPath(root: string, workdir: string, imagePath: string): string {
  const absolute = path.posix.resolve(workdir, imagePath);
  const relative = path.posix.relative(workdir, absolute);
  if (relative.startsWith("..")) throw new Error(`${imagePath} is outside WORKDIR ${workdir}; this test cannot place it`);
  return path.join(root, relative);
}

async function copyInto(source: string, dest: string, destIsDir: boolean, filter?: (src: string) => boolean): Promise<void> {
  if (statSync(source).isDirectory()) {
    await cp(source, dest, { recursive: true, filter: filter ? (src) => filter(src) : undefined, verbatimSymlinks: true });
  } else {
    const target = destIsDir ? path.join(dest, path.basename(source)) : dest;
    await mkdir(path.dirname(target), { recursive: true });
    await cp(source, target);
  }
}

describe("Dockerfile", () => {
  const stages = parseDockerfile(DOCKERFILE);
  const temps: string[] = [];

  afterAll(async () => {
    await Promise.all(temps.map((t) => rm(t, { recursive: true, force: true })));
  });

  it("has a node:24-slim builder and a non-root runtime with volumes, port, healthcheck, entrypoint and cmd", () => {
    expect(stages.map((s) => [s.name, s.base])).toEqual([
      ["builder", "node:24-slim"],
      ["runtime", "node:24-slim"],
    ]);
    const runtime = stages[1]!.instructions;
    const one = (keyword: string) => runtime.filter((i) => i.keyword === keyword).map((i) => i.args);
    expect(one("USER")).toEqual(["node"]);
    expect(one("VOLUME").map((v) => JSON.parse(v) as unknown)).toEqual([["/app/certs", "/app/logs"]]);
    expect(one("EXPOSE")).toEqual(["8080"]);
    expect(JSON.parse(one("ENTRYPOINT")[0]!)).toEqual(["node", "--max-semi-space-size=8", "dist/cli/main.js"]);
    expect(JSON.parse(one("CMD")[0]!)).toEqual(["start", "--host", "0.0.0.0", "--ca-dir", "/app/certs", "--log-file", "/app/logs/mcp-wiretap.ndjson"]);
    expect(one("HEALTHCHECK")[0]).toMatch(/CMD \["node", "-e", .*127\.0\.0\.1:8080\/healthz/);
    for (const step of one("RUN")) expect(step.split("&&").every((part) => /^\s*(mkdir|chown|chmod)\s/.test(part)), step).toBe(true);
    // Secrets never baked in.
    expect(DOCKERFILE).not.toMatch(/ENV\s+MCP_WIRETAP_PROXY_AUTH/);
  });

  it(".dockerignore keeps keys, dependencies and build output out of the context", () => {
    for (const p of ["certs/ca-key.pem", "certs/ca.pem", "node_modules/undici/index.js", "dist/cli/main.js", ".git/HEAD", "x/y/z.key", "mcp-wiretap-0.1.0.tgz"]) {
      expect(IGNORED(p), p).toBe(true);
    }
    for (const p of ["package.json", "package-lock.json", "tsconfig.json", "src/cli/main.ts", "config/policy.yaml"]) expect(IGNORED(p), p).toBe(false);
  });

  it("its build and runtime steps give a working CLI (npm ci from the registry)", { timeout: 180_000 }, async (ctx) => {
    const ping = await run("npm", ["ping"], REPO_ROOT, process.env, 20_000);
    if (ping.code !== 0) {
      const reason = `npm cannot reach the registry (npm ping: ${(ping.stderr || ping.stdout).trim().split("\n").at(-1) ?? "no answer"})`;
      console.warn(`SKIPPED Dockerfile build: ${reason}`);
      ctx.skip(reason);
      return;
    }
    const tmp = await mkdtemp(path.join(os.tmpdir(), "mcp-wiretap-docker-test-"));
    temps.push(tmp);
    // node:24-slim: its node first on PATH (npm's shebang and npm run's scripts find it).
    const bin = path.join(tmp, "bin");
    await mkdir(bin);
    await symlink(realpathSync(NODE_BIN), path.join(bin, "node"));
    const baseEnv: NodeJS.ProcessEnv = { ...process.env, PATH: `${bin}:${process.env.PATH ?? ""}`, npm_config_prefer_offline: "true", npm_config_update_notifier: "false" };
    for (const name of ["NODE_OPTIONS", "NODE_USE_ENV_PROXY", "NODE_ENV", "MCP_WIRETAP_PROXY_AUTH"]) delete baseEnv[name];

    const roots = new Map<string, { root: string; workdir: string }>();
    const log: string[] = [];
    for (const stage of stages) {
      const root = path.join(tmp, stage.name);
      await mkdir(root);
      let workdir = "/";
      const env: NodeJS.ProcessEnv = { ...baseEnv };
      for (const { keyword, args } of stage.instructions) {
        if (keyword === "WORKDIR") workdir = args;
        else if (keyword === "ENV") {
          const [name, ...value] = args.split("=");
          env[name!.trim()] = value.join("=").trim();
        } else if (keyword === "COPY") {
          const { from, sources, dest } = copyArgs(args);
          const destIsDir = dest.endsWith("/") || sources.length > 1;
          const target = hostPath(root, workdir, dest);
          for (const source of sources) {
            if (from) {
              const other = roots.get(from);
              if (!other) throw new Error(`COPY --from=${from}: no such earlier stage`);
              await copyInto(hostPath(other.root, other.workdir, source), target, destIsDir);
            } else {
              const relative = path.posix.normalize(source);
              if (IGNORED(relative)) throw new Error(`COPY ${source}: excluded by .dockerignore`);
              await copyInto(path.join(REPO_ROOT, relative), target, destIsDir, (src) => !IGNORED(path.relative(REPO_ROOT, src).split(path.sep).join("/")));
            }
          }
          log.push(`[${stage.name}] COPY ${args}`);
        } else if (keyword === "RUN") {
          if (stage.name !== "builder") continue; // folder setup for the image's user: checked above
          const started = Date.now();
          const result = await sh(args, hostPath(root, workdir, "."), env, 170_000);
          log.push(`[${stage.name}] RUN ${args} → ${result.code} in ${Date.now() - started} ms`);
          expect(result.code, `RUN ${args}\n${result.stdout}\n${result.stderr}`).toBe(0);
        }
      }
      roots.set(stage.name, { root, workdir });
    }
    console.log(log.join("\n"));

    const runtime = roots.get("runtime")!.root;
    // The production install: runtime dependencies only.
    expect(existsSync(path.join(runtime, "dist/cli/main.js"))).toBe(true);
    expect(existsSync(path.join(runtime, "dist/preload/env-proxy.js"))).toBe(true);
    expect(existsSync(path.join(runtime, "config/policy.yaml"))).toBe(true);
    expect(existsSync(path.join(runtime, "node_modules/undici/package.json"))).toBe(true);
    for (const dev of ["typescript", "vitest", "node", "@modelcontextprotocol/sdk"]) expect(existsSync(path.join(runtime, "node_modules", dev)), dev).toBe(false);
    expect(existsSync(path.join(runtime, "src"))).toBe(false);

    const runtimeInstr = stages[1]!.instructions;
    const entrypoint = JSON.parse(runtimeInstr.find((i) => i.keyword === "ENTRYPOINT")!.args) as string[];
    const cmd = JSON.parse(runtimeInstr.find((i) => i.keyword === "CMD")!.args) as string[];
    const runtimeEnv = { ...baseEnv, NODE_ENV: "production" };
    const [, ...entryArgs] = entrypoint; // "node": the project's Node 24 stands in for the image's
    const version = await run(NODE_BIN, [...entryArgs, "--version"], runtime, runtimeEnv);
    expect(version.code, version.stderr).toBe(0);
    expect(version.stdout.trim()).toBe(VERSION);

    // CMD as written, without credentials: refused before it listens anywhere.
    const mapped = cmd.map((arg) => (arg.startsWith("/app/") ? hostPath(runtime, "/app", arg) : arg));
    const refused = await run(NODE_BIN, [...entryArgs, ...mapped], runtime, runtimeEnv);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/MCP_WIRETAP_PROXY_AUTH/);

    // With credentials from the environment, on loopback and a free port here.
    const port = await closedPort();
    const loopback = mapped.map((arg, i) => (mapped[i - 1] === "--host" ? "127.0.0.1" : arg));
    const proxy = spawn(NODE_BIN, [...entryArgs, ...loopback, "--port", String(port)], {
      cwd: runtime,
      env: { ...runtimeEnv, MCP_WIRETAP_PROXY_AUTH: "wiretap:s3cret" },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    proxy.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<number | null>((resolve) => proxy.once("exit", (code) => resolve(code)));
    try {
      const deadline = Date.now() + 20_000;
      while (!/listening on/.test(stderr)) {
        if (Date.now() > deadline || proxy.exitCode !== null) throw new Error(`proxy did not start:\n${stderr}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      const healthcheck = runtimeInstr.find((i) => i.keyword === "HEALTHCHECK")!.args;
      const check = JSON.parse(healthcheck.slice(healthcheck.indexOf("CMD") + 3).trim()) as string[];
      const probe = await run(NODE_BIN, check.slice(1).map((a) => a.replace("127.0.0.1:8080", `127.0.0.1:${port}`)), runtime, runtimeEnv);
      expect(probe.code, probe.stderr).toBe(0);
      const unauthenticated = await rawProxyExchange({ host: "127.0.0.1", port }, "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n");
      expect(unauthenticated.toString("latin1")).toMatch(/^HTTP\/1\.1 407/);
      expect(existsSync(path.join(runtime, "certs/ca.pem"))).toBe(true);
    } finally {
      proxy.kill("SIGTERM");
      await exited;
    }
    const records = readFileSync(path.join(runtime, "logs/mcp-wiretap.ndjson"), "utf8");
    expect(records).toMatch(/"event":"start"/);
    expect(records).toMatch(/"event":"stop"/);
  });
});
