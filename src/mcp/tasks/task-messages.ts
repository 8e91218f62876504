/**
 * How a message takes part in a task (2025-11-25 "tasks", kept in 2026-07-28): read from the message alone.
 * A requester augments a request with `params.task`; the receiver answers at once with `{ task: Task }`;
 * `tasks/get`, `tasks/result` and `tasks/cancel` name the task by `params.taskId` (travelling the way the
 * original request did); `notifications/tasks/status` carries a Task (travelling back); requests the
 * receiver sends while the task needs input name it in `_meta["io.modelcontextprotocol/related-task"]`.
 */
import type { ClassifiedMessage } from "../jsonrpc.js";
import { isPlainObject } from "../../util/plain-object.js";

export const RELATED_TASK_META = "io.modelcontextprotocol/related-task";
export const TERMINAL_STATUSES: ReadonlySet<string> = new Set(["completed", "failed", "cancelled"]);
/** The methods that name a task in `params.taskId`. */
export const TASK_METHODS: ReadonlySet<string> = new Set(["tasks/get", "tasks/result", "tasks/cancel"]);
export const TASK_STATUS_NOTIFICATION = "notifications/tasks/status";
/** Longest task id the proxy follows: a longer one is a peer filling the table, and is recorded unfollowed. */
export const MAX_TASK_ID_BYTES = 256;

/** What a Task object (creation result, tasks/get or tasks/cancel answer, status notification) says. */
export interface TaskState {
  taskId: string;
  status: string | undefined;
  /** Milliseconds from creation the receiver keeps the task; null for unlimited. */
  ttl: number | null;
}

/** A request asking for a task (`params.task` an object), other than the tasks/* methods (the SDK sends `task: {}` there too). */
export function asksForTask(msg: ClassifiedMessage): boolean {
  return msg.kind === "request" && !msg.method.startsWith("tasks/") && isPlainObject(msg.params?.task);
}

/** `params.taskId` of a tasks/get, tasks/result or tasks/cancel request. */
export function namedTask(msg: ClassifiedMessage): string | undefined {
  if (msg.kind !== "request" || !TASK_METHODS.has(msg.method)) return undefined;
  return taskIdOf(msg.params?.taskId);
}

/** The task a request or notification names in `_meta["io.modelcontextprotocol/related-task"]`. */
export function relatedTask(msg: ClassifiedMessage): string | undefined {
  if (msg.kind !== "request" && msg.kind !== "notification") return undefined;
  const meta = msg.params?._meta;
  if (!isPlainObject(meta)) return undefined;
  const related = meta[RELATED_TASK_META];
  return isPlainObject(related) ? taskIdOf(related.taskId) : undefined;
}

/** The Task a creation answer (`result.task`) carries. */
export function createdTask(msg: ClassifiedMessage): TaskState | undefined {
  if (msg.kind !== "response") return undefined;
  const task = msg.result.task;
  return isPlainObject(task) ? taskState(task) : undefined;
}

/** The Task of a tasks/get or tasks/cancel answer (the result is the Task). */
export function answeredTask(msg: ClassifiedMessage): TaskState | undefined {
  return msg.kind === "response" ? taskState(msg.result) : undefined;
}

/** The Task of a `notifications/tasks/status`. */
export function notifiedTask(msg: ClassifiedMessage): TaskState | undefined {
  if (msg.kind !== "notification" || msg.method !== TASK_STATUS_NOTIFICATION || !isPlainObject(msg.params)) return undefined;
  return taskState(msg.params);
}

function taskState(value: Record<string, unknown>): TaskState | undefined {
  const taskId = taskIdOf(value.taskId);
  if (taskId === undefined) return undefined;
  const ttl = typeof value.ttl === "number" && Number.isFinite(value.ttl) && value.ttl >= 0 ? value.ttl : null;
  return { taskId, status: typeof value.status === "string" ? value.status.slice(0, 40) : undefined, ttl };
}

function taskIdOf(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}
