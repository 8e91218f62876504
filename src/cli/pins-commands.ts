import path from "node:path";
import { PinStore, type ToolPin } from "../policy/pin-store.js";
import type { RedisPinStore } from "../state/redis-pins.js";

export function pinsFile(opts: { caDir: string; pins?: string }): string {
  return path.resolve(opts.pins ?? path.join(opts.caDir, "pins.json"));
}

interface PinsView {
  where: string;
  servers(): string[];
  tools(server: string): [string, ToolPin][];
}

type PinsOptions = { caDir: string; pins?: string; state?: string };

/** With `--state`: the replicas' shared store in Redis, closed after `use`. */
async function withSharedStore(url: string, use: (pins: RedisPinStore, where: string) => Promise<void>): Promise<void> {
  const { openSharedState } = await import("../state/shared-state.js");
  const { redactedUrl } = await import("../state/redis-pins.js");
  const state = await openSharedState(url, { localPins: null, warn: () => undefined });
  try {
    if (state.problem) {
      process.stderr.write(`mcp-wiretap: ${state.problem}\n`);
      process.exitCode = 1;
      return;
    }
    await use(state.pins, redactedUrl(url));
  } finally {
    await state.close();
  }
}

/** `mcp-wiretap pins list`: every pinned tool, per server, with what is pending approval. */
export function pinsListCommand(opts: PinsOptions & { json?: boolean }): void | Promise<void> {
  if (!opts.state) {
    const store = new PinStore(pinsFile(opts));
    return printPins({ where: store.file, servers: () => store.servers(), tools: (s) => store.tools(s) }, opts.json);
  }
  return withSharedStore(opts.state, async (pins, where) => {
    const servers = await pins.servers();
    const tools = new Map(await Promise.all(servers.map(async (s) => [s, await pins.tools(s)] as const)));
    printPins({ where, servers: () => servers, tools: (s) => tools.get(s) ?? [] }, opts.json);
  });
}

function printPins(store: PinsView, json: boolean | undefined): void {
  if (json) {
    // Object.fromEntries defines own properties: a server or tool named "__proto__" stays data.
    const all = Object.fromEntries(store.servers().map((s) => [s, Object.fromEntries(store.tools(s))]));
    process.stdout.write(`${JSON.stringify(all, null, 2)}\n`);
    return;
  }
  const servers = store.servers();
  if (servers.length === 0) {
    process.stdout.write(`no pins yet (${store.where})\n`);
    return;
  }
  const lines: string[] = [];
  for (const server of servers) {
    lines.push(server);
    for (const [name, pin] of store.tools(server)) {
      const state = pin.pending ? (pin.sha256 ? "CHANGED, awaiting approval" : "NEW, awaiting approval") : "pinned";
      lines.push(`  ${name.padEnd(32)} ${state.padEnd(28)} ${(pin.sha256 ?? pin.pending?.sha256 ?? "").slice(0, 23)}…`);
    }
  }
  process.stdout.write(`${lines.join("\n")}\n`);
}

/** `mcp-wiretap pins approve SERVER [TOOL…]`: trust the definitions seen last. */
export function pinsApproveCommand(server: string, tools: string[], opts: PinsOptions): void | Promise<void> {
  const print = (approved: string[]): void => void process.stdout.write(approved.length === 0 ? "nothing was awaiting approval\n" : `approved: ${approved.join(", ")}\n`);
  if (!opts.state) return print(new PinStore(pinsFile(opts)).approve(server, tools, new Date()));
  return withSharedStore(opts.state, async (pins) => print(await pins.approve(server, tools, new Date())));
}
