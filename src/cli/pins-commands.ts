import path from "node:path";
import { PinStore, type ToolPin } from "../policy/pin-store.js";

export function pinsFile(opts: { caDir: string; pins?: string }): string {
  return path.resolve(opts.pins ?? path.join(opts.caDir, "pins.json"));
}

interface PinsView {
  where: string;
  servers(): string[];
  tools(server: string): [string, ToolPin][];
  approve(server: string, tools: readonly string[], now: Date): string[];
}

type PinsOptions = { caDir: string; pins?: string; state?: string };

/** The file store (synchronously), or with `--state` the replicas' shared store in Redis (closed after `use`). */
function withStore(opts: PinsOptions, use: (store: PinsView) => void): void | Promise<void> {
  if (!opts.state) {
    const store = new PinStore(pinsFile(opts));
    return use({ where: store.file, servers: () => store.servers(), tools: (s) => store.tools(s), approve: (s, t, n) => store.approve(s, t, n) });
  }
  return withSharedStore(opts.state, use);
}

async function withSharedStore(url: string, use: (store: PinsView) => void): Promise<void> {
  const opts = { state: url };
  const { openSharedState } = await import("../state/shared-state.js");
  const { redactedUrl } = await import("../state/redis-pins.js");
  const state = await openSharedState(opts.state, { localPins: null, warn: () => undefined });
  try {
    if (state.problem) {
      process.stderr.write(`mcp-wiretap: ${state.problem}\n`);
      process.exitCode = 1;
      return;
    }
    const pins = state.pins;
    return use({ where: redactedUrl(opts.state), servers: () => pins.servers(), tools: (s) => pins.tools(s), approve: (s, t, n) => pins.approve(s, t, n) });
  } finally {
    await state.close();
  }
}

/** `mcp-wiretap pins list`: every pinned tool, per server, with what is pending approval. */
export function pinsListCommand(opts: PinsOptions & { json?: boolean }): void | Promise<void> {
  return withStore(opts, (store) => {
    if (opts.json) {
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
  });
}

/** `mcp-wiretap pins approve SERVER [TOOL…]`: trust the definitions seen last. */
export function pinsApproveCommand(server: string, tools: string[], opts: PinsOptions): void | Promise<void> {
  return withStore(opts, (store) => {
    const approved = store.approve(server, tools, new Date());
    process.stdout.write(approved.length === 0 ? "nothing was awaiting approval\n" : `approved: ${approved.join(", ")}\n`);
  });
}
