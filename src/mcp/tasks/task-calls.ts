import type { TableBounds } from "../../bounds/evictions.js";
import { opposite, type Direction, type PendingRequest, type PendingTask } from "../correlator.js";
import { idKey, type ClassifiedMessage } from "../jsonrpc.js";
import type { RpcEvent, TaskMark } from "../rpc-event.js";
import { AwaitingCreation } from "./awaiting-creation.js";
import {
  answeredTask,
  asksForTask,
  createdTask,
  MAX_TASK_ID_BYTES,
  namedTask,
  notifiedTask,
  relatedTask,
  TERMINAL_STATUSES,
  type TaskState,
} from "./task-messages.js";
import { TaskTable, type FollowedTask } from "./task-table.js";
import { unansweredEvent } from "../unanswered-event.js";


/** Where a message was seen, as far as tasks care. */
interface Where {
  server: string;
  session: string | null;
  direction: Direction;
}

/** How often at most tasks past their ttl are looked for. */
const SWEEP_EVERY_MS = 1_000;

/**
 * Makes a task one call: the creating request's identity (`call`, its tool) goes on the creation, every
 * tasks/* request and answer, status notification and related-task request, and the record on which the
 * task first reaches a terminal state carries the call's latency to it. Tasks that are lost (their session
 * ended, their ttl passed, the table overflowed) before they ended are reported as unanswered calls.
 */
export class TaskCalls {
  private readonly table: TaskTable;
  private readonly awaiting: AwaitingCreation;
  private lastSweep = Number.NEGATIVE_INFINITY;
  private endReason = "";

  constructor(
    bounds: TableBounds,
    private readonly report: (event: RpcEvent) => void,
    private readonly now: () => number,
    /** Each server's share of the task table (default: src/bounds/shared-table.ts's). */
    share?: TableBounds,
  ) {
    this.table = new TaskTable(bounds, (task, loss) => this.lost(task, loss === "scope_ended" ? this.endReason : LOSS_REASONS[loss](task)), share);
    this.awaiting = new AwaitingCreation(bounds.maxEntries, bounds.maxBytes);
  }

  get usage(): { entries: number; bytes: number } {
    return this.table.usage;
  }

  /** A request: what its pending entry keeps of a task, after marking the event. */
  request(where: Where, msg: ClassifiedMessage, event: RpcEvent): PendingTask | undefined {
    this.sweep();
    if (msg.kind !== "request") return undefined;
    if (asksForTask(msg) && msg.id !== null) {
      this.awaiting.add(where.server, where.session, where.direction, { call: callOf(event.flow, msg.id), tool: event.tool });
      event.call = callOf(event.flow, msg.id);
      return { asks: true };
    }
    const named = namedTask(msg);
    const related = named === undefined ? relatedTask(msg) : undefined;
    const taskId = named ?? related;
    if (taskId === undefined) return undefined;
    // A tasks/* request travels the way the creating request did; a related-task request comes back.
    const requester = named !== undefined ? where.direction : opposite(where.direction);
    const task = this.mark(where, requester, taskId, event, msg.method === "tasks/result" ? "tasks/result" : undefined);
    if (task && task.expiresAt !== null && this.now() > task.expiresAt && !task.ended) event.task!.problem = `the task outlived its ttl (${task.ttl} ms)`;
    return { taskId, requester };
  }

  /**
   * An answer to `request`: a creation, or the answer to a tasks/* request. A tasks/result result for a task
   * the proxy does not follow (its ttl passed, the table overflowed, an id too long or not a string) is the
   * result of a call the proxy cannot name: a rule on that call's tool cannot be applied, so the result is
   * marked unreadable (enforce mode refuses it, monitor mode flags it).
   */
  answered(request: PendingRequest, where: Where, msg: ClassifiedMessage, event: RpcEvent): void {
    const followed = this.answeredTask(request, where, msg, event);
    if (followed || request.method !== "tasks/result" || msg.kind !== "response") return;
    const reason = "the result of a task the proxy does not follow: which call's result it is, and so which rules hold, cannot be told";
    event.readability = event.readability ? { ...event.readability, reason: `${event.readability.reason}; ${reason}` } : { reason, alternates: [] };
  }

  /** True when the answer was tied to a task the proxy follows. */
  private answeredTask(request: PendingRequest, where: Where, msg: ClassifiedMessage, event: RpcEvent): boolean {
    const pending = request.task;
    if (!pending) return false;
    if (pending.asks) {
      this.awaiting.remove(where.server, where.session, request.direction, callOf(request.flow, request.id));
      const created = createdTask(msg);
      if (created) this.create(request, where.session, created, event);
      return false;
    }
    if (pending.taskId === undefined || pending.requester === undefined) return false;
    const task = this.mark(where, pending.requester, pending.taskId, event);
    if (!task) return false;
    if (request.method === "tasks/result") {
      event.task!.final = true;
      event.callMethod = task.method;
      if (!task.ended) this.reached(task, msg.kind === "error" ? "failed" : TERMINAL_STATUSES.has(task.status ?? "") ? task.status! : "completed", event);
    } else if (request.method === "tasks/get" || request.method === "tasks/cancel") {
      const state = answeredTask(msg);
      if (state?.taskId === task.taskId) this.statusOf(task, state, event);
    }
    return true;
  }

  /** A `notifications/tasks/status`, or a notification naming a related task. */
  notification(where: Where, msg: ClassifiedMessage, event: RpcEvent): void {
    this.sweep();
    const state = notifiedTask(msg);
    const taskId = state?.taskId ?? relatedTask(msg);
    if (taskId === undefined) return;
    const requester = opposite(where.direction);
    const followed = this.table.get(where.server, where.session, requester, taskId);
    if (!followed && state) {
      // A receiver may announce a task before the answer that creates it arrives (server-everything does).
      const creating = this.awaiting.only(where.server, where.session, requester);
      if (creating) {
        event.call = creating.call;
        if (creating.tool !== undefined) event.tool = creating.tool;
        event.task = { id: taskId, ...(state.status !== undefined ? { status: state.status } : {}) };
        return;
      }
    }
    const task = this.mark(where, requester, taskId, event);
    if (task && state) this.statusOf(task, state, event);
  }

  /** A session ended: its tasks that never ended are reported. */
  endSession(server: string, session: string, reason: string): void {
    this.endReason = `session ended (${reason}) before the task reached a terminal state`;
    this.awaiting.dropScope(server, session);
    this.table.drop((t) => t.server === server && t.session === session, "scope_ended");
  }

  /** At shutdown: every task still open is reported. */
  close(): void {
    this.endReason = "proxy stopped before the task reached a terminal state";
    this.table.drop(() => true, "scope_ended");
  }

  /** Tasks past their ttl leave the table, at most once a second. */
  sweep(): void {
    const now = this.now();
    if (now - this.lastSweep < SWEEP_EVERY_MS) return;
    this.lastSweep = now;
    this.table.drop((t) => t.expiresAt !== null && now > t.expiresAt, "expired");
  }

  private create(request: PendingRequest, session: string | null, created: TaskState, event: RpcEvent): void {
    const now = this.now();
    const call = callOf(request.flow, request.id);
    event.call = call;
    event.task = { id: shortId(created.taskId), created: true, ...(created.status !== undefined ? { status: created.status } : {}) };
    if (Buffer.byteLength(created.taskId) > MAX_TASK_ID_BYTES) {
      event.task.problem = `task id longer than ${MAX_TASK_ID_BYTES} bytes: not followed`;
      return;
    }
    const owner = this.table.ownerOf(request.server, created.taskId);
    const task: FollowedTask = {
      server: request.server,
      session,
      requester: request.direction,
      taskId: created.taskId,
      call,
      method: request.method,
      tool: request.tool,
      id: request.id,
      flow: request.flow,
      path: request.path,
      transport: request.transport,
      protocolVersion: request.protocolVersion ?? null,
      startedAt: request.startedAt,
      ttl: created.ttl,
      expiresAt: created.ttl === null ? null : now + created.ttl,
      status: created.status,
      ended: false,
    };
    const replaced = this.table.add(task);
    if (replaced && !replaced.ended) {
      event.task.problem = "task id reused while the earlier task with this id had not ended";
      this.lost(replaced, "its task id was reused by a later task of the same session before it ended");
    } else if (owner !== undefined && owner !== session) {
      event.task.problem = "task id already used by another session";
    }
    if (created.status !== undefined && TERMINAL_STATUSES.has(created.status)) this.reached(task, created.status, event);
  }

  /** Marks a message of a task: its call, tool and task id; a task the proxy does not follow is said so. */
  private mark(where: Where, requester: Direction, taskId: string, event: RpcEvent, asking?: "tasks/result"): FollowedTask | undefined {
    event.task = { id: shortId(taskId) };
    const task = this.table.get(where.server, where.session, requester, taskId);
    if (task) {
      event.call = task.call;
      if (task.tool !== undefined) event.tool = task.tool;
      return task;
    }
    const owner = this.table.ownerOf(where.server, taskId);
    event.task.problem =
      owner !== undefined && owner !== where.session
        ? "the task belongs to another session"
        : asking === "tasks/result"
          ? "tasks/result for a task the proxy never saw created (or created before it started)"
          : "names a task the proxy never saw created (or created before it started)";
    return undefined;
  }

  private statusOf(task: FollowedTask, state: TaskState, event: RpcEvent): void {
    if (state.status === undefined) return;
    event.task!.status = state.status;
    task.status = state.status;
    if (TERMINAL_STATUSES.has(state.status) && !task.ended) this.reached(task, state.status, event);
  }

  private reached(task: FollowedTask, status: string, event: RpcEvent): void {
    task.ended = true;
    task.status = status;
    event.task!.end = { status, callLatencyMs: this.now() - task.startedAt };
  }

  private lost(task: FollowedTask, reason: string): void {
    const mark: TaskMark = { id: shortId(task.taskId), ...(task.status !== undefined ? { status: task.status } : {}) };
    this.report({ ...unansweredEvent({ ...task, direction: task.requester, id: task.id }, reason, this.now()), call: task.call, task: mark });
  }
}

const LOSS_REASONS = {
  evicted: () => "the task table was full: the task is no longer followed (it had not reached a terminal state)",
  evicted_share: (t: FollowedTask) => `${t.server} holds its whole share of the task table: its oldest task is no longer followed (it had not reached a terminal state)`,
  expired: (t: FollowedTask) => `the task outlived its ttl (${t.ttl} ms) without reaching a terminal state`,
  scope_ended: () => "session ended before the task reached a terminal state",
} as const;

/** The call a request opens, as multi-round calls name it: its flow and id. */
export function callOf(flow: string, id: NonNullable<PendingRequest["id"]>): string {
  return `${flow}#${idKey(id)}`;
}

/** A task id as a record names it: cut at MAX_TASK_ID_BYTES characters. */
function shortId(taskId: string): string {
  return taskId.length > MAX_TASK_ID_BYTES ? `${taskId.slice(0, 64)}…` : taskId;
}
