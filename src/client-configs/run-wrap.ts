/** `mcp-wiretap wrap` and `unwrap`: every config of the chosen clients, edited, and a report of what happened. */
import path from "node:path";
import { CLIENT_IDS, type ClientId, clientOfFile, configLocations, locationOfFile, type Platform } from "./clients.js";
import { editConfigFile, type FileResult } from "./config-file.js";
import type { Action } from "./plan.js";
import type { Launcher } from "./server-entry.js";
import { UsageError } from "../util/usage-error.js";

export interface WrapRun {
  action: Action;
  servers: string[];
  client?: string;
  config?: string;
  dryRun: boolean;
  /** Route remote (URL) servers through `mcp-wiretap bridge` too. */
  remote?: boolean;
  launcher: Launcher;
  stateDir: string;
  platform: Platform;
}

/** Returns the exit code: 0 done, 1 a file refused or a named server found nowhere. */
export async function runWrap(o: WrapRun, out: (line: string) => void): Promise<number> {
  const results: FileResult[] = [];
  for (const location of locationsOf(o)) {
    results.push(await editConfigFile(location, o.action, { servers: o.servers, launcher: o.launcher, stateDir: o.stateDir, dryRun: o.dryRun, remote: o.remote }));
  }
  for (const r of results) report(r, out);
  const seen = new Set(results.flatMap((r) => r.outcomes.map((e) => e.name)));
  const missing = o.servers.filter((s) => !seen.has(s));
  if (missing.length > 0) out(`no server named ${missing.map((s) => JSON.stringify(s)).join(", ")} in the files found`);
  const changed = results.some((r) => r.status === "changed");
  if (changed) out(o.action === "wrap" ? "Restart the client to apply. Its servers' messages: `mcp-wiretap ui`, or `mcp-wiretap tail --stdio-logs -f`." : "Restart the client to apply.");
  if (o.dryRun && results.some((r) => r.status === "would change")) out("(dry run: nothing written)");
  return missing.length > 0 || results.some((r) => r.status === "refused") ? 1 : 0;
}

function locationsOf(o: WrapRun) {
  const client = o.client === undefined || o.client === "all" ? undefined : clientId(o.client);
  if (o.config !== undefined) {
    const file = path.resolve(o.platform.cwd, o.config);
    const which = client ?? clientOfFile(file);
    if (!which) throw new UsageError(`--config ${o.config}: say which client reads it with --client (${CLIENT_IDS.join(", ")})`);
    return [locationOfFile(file, which)];
  }
  return configLocations(o.platform, client ? [client] : CLIENT_IDS);
}

function clientId(name: string): ClientId {
  if ((CLIENT_IDS as readonly string[]).includes(name)) return name as ClientId;
  throw new UsageError(`--client ${name}: not a client this knows; one of ${CLIENT_IDS.join(", ")}, or all`);
}

function report(r: FileResult, out: (line: string) => void): void {
  const where = `${r.location.client} (${r.location.scope}) ${r.location.file}${r.realFile ? ` -> ${r.realFile}` : ""}`;
  if (r.status === "not found") {
    out(`${where}: not found`);
    return;
  }
  const status = r.status === "changed" ? "changed" : r.status === "would change" ? "would change" : r.status === "refused" ? "refused" : r.outcomes.length === 0 ? "no servers" : "unchanged";
  out(`${where}: ${status}`);
  for (const e of r.outcomes) out(`  ${e.where.length > 2 ? e.where.slice(0, -1).join(" > ") + " > " : ""}${e.name}: ${e.result}${e.note ? ` (${e.note})` : ""}`);
  for (const note of r.notes) out(`  note: ${note}`);
  if (r.backup) out(`  backup: ${r.backup}`);
  if (r.diff && r.status === "would change") out(r.diff.trimEnd());
}
