import { ENTRY_OVERHEAD, textBytes, type TableBounds } from "../../bounds/evictions.js";
import { peerShareOf } from "../../bounds/shared-table.js";
import type { Direction } from "../correlator.js";
import type { RequestId } from "../jsonrpc.js";

/** One task the proxy follows: the call that created it and where it stands. */
export interface FollowedTask {
  readonly server: string;
  /** The session (null: none; a task is then known server-wide). */
  readonly session: string | null;
  /** Direction the creating request travelled: its tasks/* requests travel the same way. */
  readonly requester: Direction;
  readonly taskId: string;
  /** `<flow>#<id>` of the creating request: every record of the task carries it. */
  readonly call: string;
  readonly method: string;
  readonly tool: string | undefined;
  readonly id: RequestId;
  readonly flow: string;
  readonly path: string;
  readonly transport: string;
  readonly protocolVersion: string | null;
  /** When the creating request was seen. */
  readonly startedAt: number;
  /** When the receiver may forget the task (creation + ttl); null when it keeps it. */
  readonly expiresAt: number | null;
  readonly ttl: number | null;
  status: string | undefined;
  /** The terminal state was seen (the call's latency ends there). */
  ended: boolean;
}

export type TaskLoss = "evicted" | "evicted_share" | "expired" | "scope_ended";

/**
 * Tasks by (server, session, requester direction, task id), bounded by entries and bytes, in all and per
 * server (a share of each, as for the other tables: src/bounds/shared-table.ts): a server creating tasks
 * without end evicts its own, never another's. What leaves the table before it ended is handed to `onLost`
 * (never dropped silently); ended tasks go quietly, oldest first. A second index by (server, task id) tells
 * a task id another session uses apart from an unknown one.
 */
export class TaskTable {
  private readonly tasks = new Map<string, FollowedTask>();
  private readonly owners = new Map<string, string>();
  /** Each server's keys, oldest first, and their bytes. */
  private readonly byServer = new Map<string, { keys: Set<string>; bytes: number }>();
  private bytes = 0;

  constructor(
    private readonly bounds: TableBounds,
    private readonly onLost: (task: FollowedTask, loss: TaskLoss) => void,
    private readonly share: TableBounds = peerShareOf(bounds),
  ) {}

  get usage(): { entries: number; bytes: number } {
    return { entries: this.tasks.size, bytes: this.bytes };
  }

  get(server: string, session: string | null, requester: Direction, taskId: string): FollowedTask | undefined {
    return this.tasks.get(taskKey(server, session, requester, taskId));
  }

  /** The session that holds this task id on this server, when one does. */
  ownerOf(server: string, taskId: string): string | null | undefined {
    const owner = this.owners.get(ownerKey(server, taskId));
    return owner === undefined ? undefined : (JSON.parse(owner) as [string, string | null, Direction, string])[1];
  }

  /** Adds a task; returns the one it replaced under the same key, if any. */
  add(task: FollowedTask): FollowedTask | undefined {
    const key = taskKey(task.server, task.session, task.requester, task.taskId);
    const previous = this.remove(key);
    this.tasks.set(key, task);
    this.owners.set(ownerKey(task.server, task.taskId), key);
    const bytes = taskBytes(task);
    this.bytes += bytes;
    const own = this.byServer.get(task.server) ?? { keys: new Set<string>(), bytes: 0 };
    own.keys.add(key);
    own.bytes += bytes;
    this.byServer.set(task.server, own);
    // A share as large as the table (one server) is the table's bound: its loss is the table's being full.
    const shared = this.share.maxEntries < this.bounds.maxEntries || this.share.maxBytes < this.bounds.maxBytes;
    while (shared && (own.keys.size > this.share.maxEntries || (own.bytes > this.share.maxBytes && own.keys.size > 1))) this.evict(this.oldestOf(own.keys), "evicted_share");
    while (this.tasks.size > this.bounds.maxEntries || (this.bytes > this.bounds.maxBytes && this.tasks.size > 1)) this.evict(this.oldestOf(this.tasks.keys()), "evicted");
    return previous;
  }

  /** Tasks that match leave the table; those that never ended are reported lost. */
  drop(match: (t: FollowedTask) => boolean, loss: TaskLoss): void {
    for (const [key, task] of [...this.tasks]) {
      if (!match(task)) continue;
      this.remove(key);
      if (!task.ended) this.onLost(task, loss);
    }
  }

  /** Forgets one task (its result was delivered, or its receiver forgot it). */
  forget(task: FollowedTask): void {
    this.remove(taskKey(task.server, task.session, task.requester, task.taskId));
  }

  /** Of `keys` (oldest first), an ended task goes first; else the oldest. */
  private oldestOf(keys: Iterable<string>): string {
    let oldest: string | undefined;
    for (const key of keys) {
      oldest ??= key;
      if (this.tasks.get(key)!.ended) return key;
    }
    return oldest!;
  }

  private evict(key: string, loss: TaskLoss): void {
    const task = this.remove(key)!;
    if (!task.ended) this.onLost(task, loss);
  }

  private remove(key: string): FollowedTask | undefined {
    const task = this.tasks.get(key);
    if (!task) return undefined;
    this.tasks.delete(key);
    const bytes = taskBytes(task);
    this.bytes -= bytes;
    const own = this.byServer.get(task.server);
    if (own) {
      own.keys.delete(key);
      own.bytes -= bytes;
      if (own.keys.size === 0) this.byServer.delete(task.server);
    }
    const owner = ownerKey(task.server, task.taskId);
    if (this.owners.get(owner) === key) this.owners.delete(owner);
    return task;
  }
}

function taskKey(server: string, session: string | null, requester: Direction, taskId: string): string {
  return JSON.stringify([server, session, requester, taskId]);
}

function ownerKey(server: string, taskId: string): string {
  return JSON.stringify([server, taskId]);
}

/** Its strings (the key repeats server, session and id; the owner index twice more), and the overhead. */
function taskBytes(t: FollowedTask): number {
  const id = typeof t.id === "string" ? t.id : "";
  return 3 * textBytes(t.server, t.taskId) + 2 * textBytes(t.session ?? "") + textBytes(t.call, t.method, t.tool, id, t.flow, t.path, t.status) + 2 * ENTRY_OVERHEAD;
}
