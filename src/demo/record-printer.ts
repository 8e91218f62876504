/** Prints the records the demo's logs gain, as `mcp-wiretap tail` shows them, each log from where it was last read. */
import { existsSync, readFileSync } from "node:fs";
import { parseRecord } from "../saved-logs/parse-record.js";
import { TailFormatter } from "../cli/tail/formatter.js";

export class RecordPrinter {
  private readonly read = new Map<string, number>();
  private readonly formatter: TailFormatter;

  constructor(
    color: boolean,
    private readonly out: (line: string) => void,
  ) {
    this.formatter = new TailFormatter({ color, verbose: true });
  }

  /** Every whole line added to `file` since the last call, formatted. */
  print(file: string): void {
    if (!existsSync(file)) return;
    const text = readFileSync(file, "utf8");
    const from = this.read.get(file) ?? 0;
    const end = text.lastIndexOf("\n") + 1;
    if (end <= from) return;
    this.read.set(file, end);
    for (const line of text.slice(from, end).split("\n")) {
      const record = parseRecord(line);
      if (!record) continue;
      this.formatter.observe(record);
      const shown = this.formatter.format(record);
      if (shown !== null) this.out(shown);
    }
  }
}
