/**
 * The layering the records module and the pipeline rely on: the log (writing, redaction) depends on neither
 * the proxy nor the MCP model; the message model and the policy share `Decision` through a module of its own.
 * Read from the sources' relative imports (type imports included: a type cycle is still a knot to read).
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../helpers/proxy-harness.js";

const SRC = path.join(REPO_ROOT, "src");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? sourceFiles(path.join(dir, d.name)) : d.name.endsWith(".ts") ? [path.join(dir, d.name)] : []));
}

/** file (relative to src) → the files it imports (relative to src). */
function importGraph(): Map<string, Set<string>> {
  const graph = new Map<string, Set<string>>();
  for (const file of sourceFiles(SRC)) {
    const text = readFileSync(file, "utf8");
    const targets = new Set<string>();
    for (const m of text.matchAll(/(?:import|export)\s[^;]*?from\s+"(\.[^"]+)"/g)) {
      targets.add(path.relative(SRC, path.resolve(path.dirname(file), m[1]!)).replace(/\.js$/, ".ts"));
    }
    graph.set(path.relative(SRC, file), targets);
  }
  return graph;
}

const dirOf = (file: string): string => file.split(path.sep)[0]!;

function dependsOn(graph: Map<string, Set<string>>, from: string, to: string): string[] {
  const edges: string[] = [];
  for (const [file, targets] of graph) {
    if (dirOf(file) !== from) continue;
    for (const t of targets) if (dirOf(t) === to) edges.push(`${file} -> ${t}`);
  }
  return edges;
}

/** Files on an import cycle through `start`. */
function cycleThrough(graph: Map<string, Set<string>>, start: string): boolean {
  const seen = new Set<string>();
  const stack = [...(graph.get(start) ?? [])];
  while (stack.length > 0) {
    const f = stack.pop()!;
    if (f === start) return true;
    if (seen.has(f)) continue;
    seen.add(f);
    stack.push(...(graph.get(f) ?? []));
  }
  return false;
}

describe("import layering", () => {
  const graph = importGraph();

  it("the log imports neither the proxy nor the MCP model (no log↔proxy, log↔mcp cycle)", () => {
    expect(dependsOn(graph, "log", "proxy")).toEqual([]);
    expect(dependsOn(graph, "log", "mcp")).toEqual([]);
  });

  it("the records module imports nothing of the proxy (the proxy emits events, records shape them)", () => {
    expect(dependsOn(graph, "records", "proxy")).toEqual([]);
  });

  it("the pipeline is imported by no stage it calls; the records module by none of the stages it reads", () => {
    for (const dir of ["log", "mcp", "policy", "body"]) expect(dependsOn(graph, dir, "records"), dir).toEqual([]);
    for (const dir of ["log", "mcp", "proxy", "policy", "body", "stdio"]) expect(dependsOn(graph, dir, "pipeline"), dir).toEqual([]);
  });

  it("the message model and the policy share Decision without a file cycle", () => {
    expect(cycleThrough(graph, path.join("mcp", "rpc-event.ts"))).toBe(false);
    expect(cycleThrough(graph, path.join("policy", "policy.ts"))).toBe(false);
  });
});
