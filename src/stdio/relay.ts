import { spawn, type ChildProcess, type ChildProcessByStdio } from "node:child_process";
import type { Readable, Writable } from "node:stream";
import type { StdioTap } from "./stdio-tap.js";

export interface RelayIo {
  stdin: Readable;
  stdout: Writable;
  stderr: Writable;
  /**
   * Bytes that may wait for a peer that does not read before the relay stops reading that peer: the shim
   * answers what it refuses on the sender's own input, and a sender that never reads it must not queue those
   * answers without bound. Above what forwarding alone can queue (a judged line and a read).
   */
  maxQueuedBytes: number;
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

/** A server started before its relay: how its launch ends is kept from the moment of the spawn. */
export interface SpawnedServer {
  child: ChildProcessByStdio<Writable, Readable, Readable>;
  /** Its exit, or the failed spawn; listened for at once, so none is missed while the relay is set up. */
  outcome: Promise<RelayEnd>;
}

/**
 * Starts CMD (no shell) with its stdio on pipes nobody reads yet: what it writes waits in the pipes, and it
 * reads nothing, until `relayServer` joins it to the client through the tap. `stdio` starts the server first
 * so that its start-up and the loading of the policy and the pipeline overlap.
 */
export function spawnServer(command: string, args: string[]): SpawnedServer {
  const child = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"], shell: false, windowsHide: true });
  const outcome = new Promise<RelayEnd>((resolve) => {
    // A failed spawn emits no "exit"; a failed kill does not end anything.
    child.once("error", (error: NodeJS.ErrnoException) => {
      if (child.pid === undefined) resolve({ kind: "spawn_error", error });
    });
    child.once("exit", (code, signal) => resolve({ kind: "exit", code, signal }));
  });
  return { child, outcome };
}

/**
 * Runs CMD (no shell) and relays both ways through the tap; CMD's stderr goes to ours as it comes, and to
 * `onStderr`. Back-pressure is kept: a reader that is full pauses its writer, nothing is buffered unbounded.
 */
export function startRelay(command: string, args: string[], tap: (child: ChildProcess) => StdioTap, io: RelayIo, onStderr: (chunk: Buffer) => void): Relay {
  return relayServer(spawnServer(command, args), tap, io, onStderr);
}

/** `startRelay` for a server already started with `spawnServer`. */
export function relayServer(server: SpawnedServer, tap: (child: ChildProcess) => StdioTap, io: RelayIo, onStderr: (chunk: Buffer) => void): Relay {
  const { child } = server;
  const done = new Promise<RelayEnd>((settled) => {
    // The launch is over: bytes held for a line not yet ended (a call ended by a CR alone, which a receiver
    // that ends lines at CR has run) are read as a last line each way, so that they are recorded.
    const resolve = (end: RelayEnd): void => {
      t.clientEnded();
      t.serverEnded();
      settled(end);
    };
    let exited: RelayEnd | null = null;
    let openOutputs = 2;
    const settle = (): void => {
      if (exited && openOutputs === 0) resolve(exited);
    };
    void server.outcome.then((end) => {
      if (end.kind === "spawn_error") return resolve(end);
      exited = end;
      settle();
      setTimeout(() => resolve(end), DRAIN_AFTER_EXIT_MS).unref();
    });
    const t = tap(child);
    const closed = (): void => {
      openOutputs--;
      settle();
    };
    const owed = (to: Writable) => ({ to, limit: io.maxQueuedBytes });
    pump(child.stdout, io.stdout, (chunk) => t.fromServer(chunk), () => {
      t.serverEnded();
      closed();
    }, owed(child.stdin));
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
    }, owed(io.stdout));
  });
  return { child, done };
}

/** The `maxQueuedBytes` for lines judged up to `maxInspectBytes`: a judged line and a read, twice over. */
export function maxQueuedBytesFor(maxInspectBytes: number): number {
  return 2 * maxInspectBytes + 1024 * 1024;
}

/**
 * Reads `from` chunk by chunk into `handle`, pausing while `to` is full, and while more than `replies.limit`
 * bytes wait for `from`'s own peer to read them (the answers the shim wrote it).
 */
function pump(from: Readable, to: Writable, handle: (chunk: Buffer) => void, ended: () => void, replies?: { to: Writable; limit: number }): void {
  let finished = false;
  const finish = (): void => {
    if (finished) return;
    finished = true;
    ended();
  };
  from.on("data", (chunk: Buffer) => {
    handle(chunk);
    const full = [to.writableNeedDrain ? to : null, replies && replies.to.writableLength > replies.limit ? replies.to : null];
    for (const w of full) {
      if (w === null || w.destroyed) continue;
      from.pause();
      w.once("drain", () => from.resume());
      w.once("close", () => from.resume());
      break;
    }
  });
  from.once("end", finish);
  from.once("close", finish);
  from.once("error", finish);
}
