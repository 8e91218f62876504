import { fileLines } from "../../cli/tail/follow.js";
import { UsageError } from "../../util/usage-error.js";
import { resolveLogInputs } from "./log-files.js";
import { RecordHistory } from "./record-history.js";
import type { UiCommandOptions } from "./ui-command.js";
import { startUiServer } from "./ui-server.js";

/** `mcp-wiretap ui`: runs until SIGINT/SIGTERM, or until `signal` aborts when one is given (tests). */
export async function uiCommand(
  paths: string[],
  o: UiCommandOptions,
  { signal, onReady }: { signal?: AbortSignal; onReady?: (url: string) => void } = {},
): Promise<void> {
  const inputs = await resolveLogInputs(paths).catch((err: NodeJS.ErrnoException) => {
    throw new UsageError(`cannot read ${err.path ?? paths.join(" ")}: ${err.code ?? err.message}`);
  });
  if (inputs.length === 0) throw new UsageError(`no *.ndjson log in ${paths.join(" ")}`);
  const history = new RecordHistory();
  const stop = new AbortController();
  signal?.addEventListener("abort", () => stop.abort(), { once: true });
  // Rotated files first, in order; then the current files, followed when asked.
  for (const input of inputs.filter((i) => i.rotated || !o.follow)) {
    for await (const line of fileLines(input.file)) history.append(line);
  }
  const followed = o.follow ? inputs.filter((i) => !i.rotated) : [];
  const ui = await startUiServer({
    port: o.uiPort,
    history,
    source: { kind: "files", follow: followed.length > 0, description: inputs.map((i) => i.file).join(", ") },
  });
  const what = followed.length > 0 ? `following ${followed.length} file(s) after ${history.end} rotated records` : `${history.end} records from ${inputs.length} file(s)`;
  process.stderr.write(`mcp-wiretap: ${what}\n  UI: ${ui.url}\n`);
  onReady?.(ui.url);
  const readers = followed.map(async (input) => {
    for await (const line of fileLines(input.file, { follow: true, signal: stop.signal })) history.append(line);
  });
  await new Promise<void>((resolve) => {
    const done = (): void => resolve();
    stop.signal.addEventListener("abort", done, { once: true });
    if (!signal) {
      process.once("SIGINT", () => stop.abort());
      process.once("SIGTERM", () => stop.abort());
    }
  });
  await ui.close();
  await Promise.allSettled(readers);
}
