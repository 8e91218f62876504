/**
 * After the run: how many tests were skipped, which, and why, so that a skip cannot hide a missing feature.
 * The why is the note a test gave `ctx.skip(note)`, else the `SKIPPED <file>: why` line its file printed,
 * else said to be missing (a bare runIf/skipIf: give it a reason).
 */
import type { UserConsoleLog } from "vitest";
import type { Reporter, TestModule, Vitest } from "vitest/node";

const NO_REASON = "no reason given (a bare runIf/skipIf: say why with ctx.skip(reason))";

export default class SkipSummaryReporter implements Reporter {
  /** What each file said about its skips, by the file's task id. */
  private readonly said = new Map<string, string>();
  private filtered = false;

  onInit(vitest: Vitest): void {
    this.filtered = vitest.config.testNamePattern !== undefined;
  }

  onUserConsoleLog(log: UserConsoleLog): void {
    if (log.taskId === undefined) return;
    // A file with several needs says each (their lines may come in one log).
    for (const match of log.content.matchAll(/^SKIPPED \S+: (.*)$/gm)) {
      const before = this.said.get(log.taskId);
      const why = match[1]!.trim();
      this.said.set(log.taskId, before === undefined || before.includes(why) ? (before ?? why) : `${before}; or ${why}`);
    }
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const skipped: { file: string; name: string; why: string }[] = [];
    let total = 0;
    for (const module of modules) {
      for (const test of module.children.allTests()) {
        total++;
        const result = test.result();
        if (result.state !== "skipped") continue;
        const why = result.note ?? this.said.get(module.id) ?? (test.options.mode === "todo" ? "todo" : NO_REASON);
        skipped.push({ file: module.relativeModuleId, name: test.fullName, why });
      }
    }
    // Tests left out by -t count as skipped too: said, so that a filtered run is not read as a full one.
    const filter = this.filtered ? " (-t given: tests it left out count too)" : "";
    const lines = [`Skipped: ${skipped.length} of ${total} tests${filter}${skipped.length > 0 ? ", and why:" : ""}`];
    const byReason = new Map<string, string[]>();
    for (const s of skipped) {
      const key = `${s.file}: ${s.why}`;
      byReason.set(key, [...(byReason.get(key) ?? []), s.name]);
    }
    for (const [key, names] of byReason) {
      lines.push(`  ${key}`);
      for (const name of names) lines.push(`      ${name}`);
    }
    process.stdout.write(`\n${lines.join("\n")}\n`);
  }
}
