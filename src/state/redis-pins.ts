import { createHash } from "node:crypto";
import { isPin, type PinTable, type ToolPin } from "../policy/pin-file.js";
import { MAX_PINNED_SERVERS, PinStore, PinStoreError, approvePins, observePins, type PinObservation, type PinVerdict } from "../policy/pin-store.js";
import { StateUnavailableError, type AsyncRedis } from "./async-redis.js";

const PREFIX = "mcp-wiretap:pins:";
const SERVERS = `${PREFIX}servers`;

/** Keys of one server: its name hashed, so a hostile host name cannot shape a key. */
function keys(server: string): { first: string; tools: string } {
  const id = createHash("sha256").update(server).digest("hex");
  return { first: `${PREFIX}first:${id}`, tools: `${PREFIX}tools:${id}` };
}

/**
 * Tool pins in Redis, shared by every replica: the same trust-on-first-use rules as the file store
 * (observePins/approvePins), one server's pins read in one MULTI and the changed ones written in another,
 * asynchronously: only the `tools/list` answer judged waits for them. When Redis cannot be reached (or does
 * not answer within the deadline), judging goes on against this replica's file store, and the finding says
 * so (`pins_not_saved`): a pin approved elsewhere may then be missed, never silently.
 */
export class RedisPinStore {
  constructor(
    private readonly redis: AsyncRedis,
    private readonly fallback: PinStore | null,
  ) {}

  async observe(server: string, tools: readonly PinObservation[], now: Date): Promise<{ verdicts: PinVerdict[]; notSaved: string | null }> {
    try {
      const { table, serverCount } = await this.load(server);
      const { verdicts, changed } = observePins(table, server, tools, now, serverCount >= MAX_PINNED_SERVERS);
      if (changed.size > 0) await this.save(server, table, changed);
      return { verdicts, notSaved: null };
    } catch (err) {
      if (!(err instanceof StateUnavailableError)) throw err;
      const local = this.fallback?.observe(server, tools, now);
      const why = `shared pin store ${redactedUrl(this.redis.url)} unreachable (${err.message}); judged against this replica's local pins`;
      return { verdicts: local?.verdicts ?? tools.map(() => "store_full"), notSaved: local?.notSaved ? `${why}; ${local.notSaved}` : why };
    }
  }

  async approve(server: string, toolNames: readonly string[], now: Date): Promise<string[]> {
    const { table } = await this.load(server);
    const entry = table.get(server);
    if (!entry) throw new PinStoreError(`no pins for server ${server}`);
    const approved = approvePins(server, entry, toolNames, now);
    if (approved.length > 0) await this.save(server, table, new Set(approved));
    return approved;
  }

  async servers(): Promise<string[]> {
    return ((await this.redis.call(["SMEMBERS", SERVERS])) as string[]).sort();
  }

  async tools(server: string): Promise<[string, ToolPin][]> {
    return [...((await this.load(server)).table.get(server)?.tools ?? [])].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  private async load(server: string): Promise<{ table: PinTable; serverCount: number }> {
    const k = keys(server);
    const [count, member, first, fields] = (await this.redis.multi([["SCARD", SERVERS], ["SISMEMBER", SERVERS, server], ["GET", k.first], ["HGETALL", k.tools]])) as [
      number,
      number,
      string | null,
      string[] | Record<string, string>,
    ];
    const table: PinTable = new Map();
    if (member === 1) {
      const tools = new Map<string, ToolPin>();
      // RESP2 gives a flat array; some clients turn it into an object: accept both, and never use it as a map.
      const pairs = Array.isArray(fields) ? fields : Object.entries(fields).flat();
      for (let i = 0; i + 1 < pairs.length; i += 2) {
        let pin: unknown;
        try {
          pin = JSON.parse(pairs[i + 1]!);
        } catch {
          continue;
        }
        if (isPin(pin)) tools.set(pairs[i]!, { sha256: pin.sha256, firstSeen: pin.firstSeen, approvedAt: pin.approvedAt, pending: pin.pending && { sha256: pin.pending.sha256, seen: pin.pending.seen } });
      }
      table.set(server, { firstSeen: first ?? undefined, tools });
    }
    return { table, serverCount: count };
  }

  private async save(server: string, table: PinTable, changed: Set<string>): Promise<void> {
    const entry = table.get(server)!;
    const k = keys(server);
    const commands: (string | number)[][] = [];
    if (changed.has("")) {
      commands.push(["SADD", SERVERS, server]);
      if (entry.firstSeen !== undefined) commands.push(["SET", k.first, entry.firstSeen, "NX"]);
    }
    for (const name of changed) {
      if (name === "") continue;
      commands.push(["HSET", k.tools, name, JSON.stringify(entry.tools.get(name))]);
    }
    if (commands.length > 0) await this.redis.multi(commands);
  }
}

/** The URL without its password, for messages. */
export function redactedUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "[redacted]";
    return u.toString();
  } catch {
    return "redis://…";
  }
}
