import path from "node:path";
import { PinStore } from "../policy/pin-store.js";

export function pinsFile(opts: { caDir: string; pins?: string }): string {
  return path.resolve(opts.pins ?? path.join(opts.caDir, "pins.json"));
}

/** `mcp-wiretap pins list`: every pinned tool, per server, with what is pending approval. */
export function pinsListCommand(opts: { caDir: string; pins?: string; json?: boolean }): void {
  const store = new PinStore(pinsFile(opts));
  if (opts.json) {
    // Object.fromEntries defines own properties: a server or tool named "__proto__" stays data.
    const all = Object.fromEntries(store.servers().map((s) => [s, Object.fromEntries(store.tools(s))]));
    process.stdout.write(`${JSON.stringify(all, null, 2)}\n`);
    return;
  }
  const servers = store.servers();
  if (servers.length === 0) {
    process.stdout.write(`no pins yet (${store.file})\n`);
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
export function pinsApproveCommand(server: string, tools: string[], opts: { caDir: string; pins?: string }): void {
  const store = new PinStore(pinsFile(opts));
  const approved = store.approve(server, tools, new Date());
  process.stdout.write(approved.length === 0 ? "nothing was awaiting approval\n" : `approved: ${approved.join(", ")}\n`);
}
