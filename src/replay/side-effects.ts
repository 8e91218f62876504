/**
 * A replayed tool call runs the tool again. Only a tool the capture shows as `readOnlyHint: true` goes
 * without asking; any other needs `--yes` or a "y" on a terminal, told the tool's name and, when the
 * capture says so, that it is destructive. Without a terminal and without --yes: refused, saying what to pass.
 */
import { createInterface } from "node:readline/promises";
import { UsageError } from "../util/usage-error.js";
import type { CapturedCall } from "./selection.js";

export interface SideEffectCheck {
  /** Null when the replay may go ahead without asking. */
  question: string | null;
  /** Why it needs asking, for the refusal. */
  reason: string;
  /** The capture marks the tool destructiveHint: true. */
  destructive: boolean;
}

/** Explains itself like a policy matcher: what it found in the capture. */
export function checkSideEffects(method: string, tool: string | null, definition: Record<string, unknown> | null): SideEffectCheck {
  if (method !== "tools/call") return { question: null, reason: `${method} reads, it changes nothing`, destructive: false };
  const name = tool ?? "(unnamed tool)";
  const annotations = (definition?.annotations ?? null) as Record<string, unknown> | null;
  if (annotations?.readOnlyHint === true) return { question: null, reason: `the capture marks ${name} readOnlyHint: true`, destructive: false };
  const destructive = annotations?.destructiveHint === true;
  const reason = definition === null
    ? `the capture holds no definition of tool ${name} (no tools/list result), so it may change things`
    : destructive
      ? `the capture marks tool ${name} destructive (destructiveHint: true)`
      : `the capture does not mark tool ${name} read-only (readOnlyHint: true), so it may change things`;
  return { question: `Replay tool ${name}${destructive ? " — DESTRUCTIVE, by its own annotation" : ""}? It runs again on the server. [y/N] `, reason, destructive };
}

/**
 * The tool a replay runs and its captured definition: the params sent name it, and an edit may name another
 * tool of the server than the captured call did (or none: then nothing vouches for it).
 */
export function replayedTool(call: Pick<CapturedCall, "method" | "tool" | "serverTools">, params: Record<string, unknown> | undefined): { tool: string | null; definition: Record<string, unknown> | null } {
  if (call.method !== "tools/call" || params === undefined) return { tool: call.tool, definition: call.tool === null ? null : (call.serverTools.get(call.tool) ?? null) };
  const tool = typeof params.name === "string" ? params.name : null;
  return { tool, definition: tool === null ? null : (call.serverTools.get(tool) ?? null) };
}

/** checkSideEffects of the tool the replay's params run (not only the captured one). */
export function replaySideEffects(call: Pick<CapturedCall, "method" | "tool" | "serverTools">, params: Record<string, unknown> | undefined): SideEffectCheck {
  const { tool, definition } = replayedTool(call, params);
  return checkSideEffects(call.method, tool, definition);
}

export interface ConfirmIo {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
}

/** Resolves when the replay may go; throws a UsageError saying what to pass when it may not. */
export async function confirmSideEffects(check: SideEffectCheck, yes: boolean, io: ConfirmIo): Promise<void> {
  if (check.question === null || yes) return;
  if (!io.stdin.isTTY || !io.stderr.isTTY) {
    throw new UsageError(`refused: ${check.reason}; replaying runs it again: pass --yes to replay it anyway`);
  }
  const rl = createInterface({ input: io.stdin, output: io.stderr });
  try {
    const answer = await rl.question(check.question);
    if (!/^y(es)?$/i.test(answer.trim())) throw new UsageError("not replayed (answer y to replay, or pass --yes)");
  } finally {
    rl.close();
  }
}
