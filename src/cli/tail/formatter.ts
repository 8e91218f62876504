import { painter, printable, type Paint } from "../../saved-logs/color.js";
import { eventLine, exchangeFailed, httpLine, sessionLine } from "./event-lines.js";
import { header, str, type LogRecord } from "../../saved-logs/filters.js";
import { BranchPairing } from "./pairing.js";
import { callLine, payloadLine } from "./payload-line.js";
import { rpcLine } from "./rpc-line.js";

export interface FormatterOptions {
  color: boolean;
  /** Show every `http` record, not only those of failed or non-MCP exchanges. */
  allHttp?: boolean;
  /** `-v`: each message's arguments, result or error on an indented line under it. */
  verbose?: boolean;
}

/**
 * The human view of a log: one line per record worth seeing, in fixed columns
 *
 *   TIME (UTC)   SESSION  DIR KIND       ID         LATENCY  SIZE  TEXT  [DECISION]
 *   07:35:38.587 e596b16f → request      #3                100B  tools/call get-sum  FLAG audit-arithmetic
 *   07:35:38.597 e596b16f ← └ response   #3           15ms    97B  tools/call get-sum  FLAG audit-arithmetic
 *
 * A response (progress, error, unanswered mark) that directly follows its request is drawn as a branch
 * (`├`, `└`) under it. `http` records are shown only for exchanges that failed (status ≥ 400, or an error)
 * or carried no MCP, unless `allHttp`. Stateful: feed it every record in order (`observe`), then `format`
 * those that passed the filters.
 */
export class TailFormatter {
  private readonly paint: Paint;
  /** Flows known to carry MCP (an rpc record named them), bounded. */
  private readonly mcpFlows = new Set<string>();
  private readonly pairing = new BranchPairing();

  constructor(private readonly opts: FormatterOptions) {
    this.paint = painter(opts.color);
  }

  /** Learns from every record, shown or not (which flows are MCP). */
  observe(record: LogRecord): void {
    if (record.event === "rpc" && typeof record.flow === "string") {
      this.mcpFlows.add(record.flow);
      if (this.mcpFlows.size > 100_000) this.mcpFlows.delete(this.mcpFlows.values().next().value as string);
    }
  }

  /** The line for a record, or null when the view leaves it out. */
  format(record: LogRecord): string | null {
    switch (record.event) {
      case "rpc": {
        const line = rpcLine(this.paint, record, this.pairing.branchOf(record));
        const details = this.opts.verbose ? [payloadLine(this.paint, record), callLine(this.paint, record)].filter((d): d is string => d !== null) : [];
        return [line, ...details].join("\n");
      }
      case "http":
        return this.http(record);
      case "session":
        return sessionLine(this.paint, record);
      default:
        this.pairing.interrupt();
        return eventLine(this.paint, record);
    }
  }

  /** A line that is not a JSON record: as it is, dimmed. */
  formatRaw(line: string): string {
    this.pairing.interrupt();
    return this.paint("dim", printable(line));
  }

  private http(r: LogRecord): string | null {
    const flow = str(r.flow);
    const mcp =
      (flow !== null && this.mcpFlows.has(flow)) ||
      header(r.requestHeaders, "mcp-session-id") !== undefined ||
      header(r.requestHeaders, "mcp-protocol-version") !== undefined;
    if (!this.opts.allHttp && mcp && !exchangeFailed(r)) return null;
    this.pairing.interrupt();
    return httpLine(this.paint, r);
  }
}
