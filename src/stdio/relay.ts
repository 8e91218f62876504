import { spawn, type ChildProcess } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import type { StdioTap } from "./stdio-tap.js";

export interface RelayIo {
  stdin: Readable;
  stdout: Writable;
  stderr: Writable;
}

export type RelayEnd =
  | { kind: "exit"; code: number | null; signal: NodeJS.Signals | null }
  | { kind: "spawn_error"; error: NodeJS.ErrnoException };

export interface Relay {
  child: ChildProcess;
  /** Settles once the server has exited and its stdout and stderr are read to the end. */
  done: Promise<RelayEnd>;
}

/** How long, after the server exited, its stdout may stay open (held by a process it left behind). */
const DRAIN_AFTER_EXIT_MS = 2000;

/**
 * Runs CMD (no shell) and relays both ways through the tap; CMD's stderr goes to ours as it comes, and to
 * `onStderr`. Back-pressure is kept: a reader that is full pauses its writer, nothing is buffered unbounded.
 */
export function startRelay(command: string, args: string[], tap: (child: ChildProcess) => StdioTap, io: RelayIo, onStderr: (chunk: Buffer) => void): Relay {
  const child = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"], shell: false, windowsHide: true });
  const done = new Promise<RelayEnd>((resolve) => {
    let exited: RelayEnd | null = null;
    let openOutputs = 2;
    const settle = (): void => {
      if (exited && openOutputs === 0) resolve(exited);
    };
    child.once("error", (error: NodeJS.ErrnoException) => {
      // A failed spawn emits no "exit"; a failed kill does not end anything.
      if (child.pid === undefined) resolve({ kind: "spawn_error", error });
    });
    child.once("exit", (code, signal) => {
      exited = { kind: "exit", code, signal };
      settle();
      setTimeout(() => resolve(exited!), DRAIN_AFTER_EXIT_MS).unref();
    });
    const t = tap(child);
    const closed = (): void => {
      openOutputs--;
      settle();
    };
    pump(child.stdout, io.stdout, (chunk) => t.fromServer(chunk), () => {
      t.serverEnded();
      closed();
    });
    pump(child.stderr, io.stderr, (chunk) => {
      io.stderr.write(chunk);
      onStderr(chunk);
    }, closed);
    // Writes to a server that exited or closed its stdin fail with EPIPE: the exit is what matters.
    child.stdin.on("error", () => {});
    io.stdout.on("error", () => {});
    io.stderr.on("error", () => {});
    pump(io.stdin, child.stdin, (chunk) => t.fromClient(chunk), () => {
      t.clientEnded();
      child.stdin.end();
    });
  });
  return { child, done };
}

/** Reads `from` chunk by chunk into `handle`, pausing while `to` is full. */
function pump(from: Readable, to: Writable, handle: (chunk: Buffer) => void, ended: () => void): void {
  let finished = false;
  const finish = (): void => {
    if (finished) return;
    finished = true;
    ended();
  };
  from.on("data", (chunk: Buffer) => {
    handle(chunk);
    if (to.writableNeedDrain && !to.destroyed) {
      from.pause();
      to.once("drain", () => from.resume());
      to.once("close", () => from.resume());
    }
  });
  from.once("end", finish);
  from.once("close", finish);
  from.once("error", finish);
}
