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

  it("the proxy imports nothing of the records module (it reports typed events; records shape them)", () => {
    expect(dependsOn(graph, "proxy", "records")).toEqual([]);
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

/** The top-level folders of src/ that import each other, directly or through others (each cycle once). */
function directoryCycles(graph: Map<string, Set<string>>): string[][] {
  const edges = new Map<string, Set<string>>();
  for (const [file, targets] of graph) {
    for (const t of targets) {
      if (dirOf(file) !== dirOf(t)) edges.set(dirOf(file), (edges.get(dirOf(file)) ?? new Set()).add(dirOf(t)));
    }
  }
  // Tarjan's strongly connected components: a component of more than one folder is a knot of cycles.
  let index = 0;
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const components: string[][] = [];
  const visit = (v: string): void => {
    order.set(v, index);
    low.set(v, index++);
    stack.push(v);
    for (const w of edges.get(v) ?? []) {
      if (!order.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (stack.includes(w)) low.set(v, Math.min(low.get(v)!, order.get(w)!));
    }
    if (low.get(v) === order.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        component.push(w);
      } while (w !== v);
      if (component.length > 1) components.push(component.sort());
    }
  };
  for (const v of [...edges.keys()].sort()) if (!order.has(v)) visit(v);
  return components;
}

describe("folder layering", () => {
  it("no two top-level folders of src/ import each other, directly or around a loop", () => {
    const graph = importGraph();
    const cycles = directoryCycles(graph);
    const explain = cycles.map((c) => `${c.join(" ↔ ")}:\n  ${c.flatMap((a) => c.filter((b) => b !== a).flatMap((b) => dependsOn(graph, a, b).slice(0, 3))).join("\n  ")}`);
    expect(explain).toEqual([]);
  });
});
