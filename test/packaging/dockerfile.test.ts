/**
 * The Dockerfile read as text: its stages, steps and `.dockerignore`. The image itself is built from this file
 * unchanged and run by `npm run test:deploy` (test/deploy/containers/image.deploy.ts), which `.ci/run` calls
 * after the suite: a container engine builds it there, so the suite no longer imitates the build step by step.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../helpers/proxy-harness.js";


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

describe("Dockerfile", () => {
  const stages = parseDockerfile(DOCKERFILE);

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
});
