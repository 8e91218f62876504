/** A proxy under test running in its own process: output kept for the report, RSS and CPU read from /proc. */
import { spawn, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { sleep, waitFor } from "./time.ts";

const KEEP_BYTES = 16 * 1024;

export class Child {
  readonly name: string;
  readonly process: ChildProcess;
  stdout = "";
  stderr = "";
  exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  /** Set once the bench asked the child to stop (an exit after that is expected). */
  stopping = false;
  private readonly exited: Promise<void>;

  constructor(name: string, command: string, args: string[], env: NodeJS.ProcessEnv = process.env) {
    this.name = name;
    this.process = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"], env });
    this.process.stdout?.setEncoding("utf8").on("data", (s: string) => (this.stdout = keepTail(this.stdout + s)));
    this.process.stderr?.setEncoding("utf8").on("data", (s: string) => (this.stderr = keepTail(this.stderr + s)));
    this.exited = new Promise((resolve) => {
      this.process.once("exit", (code, signal) => {
        this.exit = { code, signal };
        resolve();
      });
      this.process.once("error", (err) => {
        this.stderr += `\n[bench] spawn error: ${err.message}`;
        this.exit ??= { code: null, signal: null };
        resolve();
      });
    });
    Child.all.add(this);
  }

  static readonly all = new Set<Child>();

  get pid(): number {
    return this.process.pid ?? -1;
  }

  get alive(): boolean {
    return this.exit === null;
  }

  /** Waits until `pattern` appears on stderr or stdout; returns the match or null (exit or timeout). */
  async waitForOutput(pattern: RegExp, ms: number): Promise<RegExpMatchArray | null> {
    let match: RegExpMatchArray | null = null;
    await waitFor(() => {
      match = this.stderr.match(pattern) ?? this.stdout.match(pattern);
      return match !== null || !this.alive;
    }, ms);
    return match;
  }

  /** SIGTERM, then SIGKILL after `graceMs`; resolves with how it ended. */
  async stop(graceMs = 5000): Promise<{ code: number | null; signal: NodeJS.Signals | null; killed: boolean }> {
    this.stopping = true;
    let killed = false;
    if (this.alive) {
      this.process.kill("SIGTERM");
      await Promise.race([this.exited, sleep(graceMs)]);
      if (this.alive) {
        killed = true;
        this.process.kill("SIGKILL");
        await Promise.race([this.exited, sleep(2000)]);
      }
    }
    Child.all.delete(this);
    return { code: this.exit?.code ?? null, signal: this.exit?.signal ?? null, killed };
  }

  /** Resident set size in MiB, or null when the process is gone. */
  rssMiB(): number | null {
    return rssMiB(this.pid);
  }

  /** CPU seconds (user + system) used so far. */
  cpuSeconds(): number | null {
    return cpuSeconds(this.pid);
  }
}

/** Kills every child still running (on abort); only processes this bench started. */
export function killAllChildren(): void {
  for (const c of Child.all) if (c.alive) c.process.kill("SIGKILL");
}

export function rssMiB(pid: number): number | null {
  try {
    const m = readFileSync(`/proc/${pid}/status`, "utf8").match(/^VmRSS:\s+(\d+)\s+kB/m);
    return m ? Number(m[1]) / 1024 : null;
  } catch {
    return null;
  }
}

const CLOCK_TICKS = 100; // USER_HZ on Linux

export function cpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // fields[0] is field 3 (state); utime is field 14, stime field 15.
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

function keepTail(s: string): string {
  return s.length > KEEP_BYTES ? s.slice(s.length - KEEP_BYTES) : s;
}
