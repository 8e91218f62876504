import path from "node:path";
import { FileReadError, fileLines } from "../../saved-logs/follow.js";
import { ensureLogFolder, stdioLogFolder } from "../../stdio/log-folder.js";
import { UsageError } from "../../util/usage-error.js";
import { resolveLogInputs, watchForNewLogs } from "./log-files.js";
import { RecordHistory } from "./record-history.js";
import { mergeByTime, type FollowOn, type MergeInput } from "./merge-by-time.js";
import type { UiCommandOptions } from "./ui-options.js";
import { replayActions, runningLogStream } from "./replay-actions.js";
import { createLogSink, type LogSink } from "../../log/logger.js";
import { parseRecord } from "../../saved-logs/parse-record.js";
import { startUiServer } from "./ui-server.js";

/** `mcp-wiretap ui`: runs until SIGINT/SIGTERM, or until `signal` aborts when one is given (tests). */
export async function uiCommand(
  given: string[],
  o: UiCommandOptions,
  { signal, onReady, env = process.env }: { signal?: AbortSignal; onReady?: (url: string) => void; env?: NodeJS.ProcessEnv } = {},
): Promise<void> {
  // No path: the folder `mcp-wiretap stdio` writes one log per launch into, followed, new launches included.
  const watched = given.length === 0 ? stdioLogFolder(env) : null;
  // The folder is listed again every second for new launches: each note once.
  const noted = new Set<string>();
  const noteOnce = (message: string): void => {
    if (noted.has(message) || noted.size > 1_000) return;
    noted.add(message);
    process.stderr.write(`mcp-wiretap: ${message}\n`);
  };
  if (watched !== null) {
    ensureLogFolder(watched);
    o = { ...o, follow: true };
  }
  const paths = watched !== null ? [watched] : given;
  const inputs = await resolveLogInputs(paths, noteOnce).catch((err: NodeJS.ErrnoException) => {
    if (err instanceof FileReadError) throw new UsageError(err.message);
    throw new UsageError(`cannot read ${err.path ?? paths.join(" ")}: ${err.code ?? err.message}`);
  });
  if (inputs.length === 0 && watched === null) throw new UsageError(`no *.ndjson log in ${paths.join(" ")}`);
  const replayLog = o.allowReplay ? replayTarget(given, inputs) : null;
  // Replays are appended to the log: followed, so the page sees them as recorded.
  if (replayLog !== null) o = { ...o, follow: true };
  const history = new RecordHistory();
  const stop = new AbortController();
  signal?.addEventListener("abort", () => stop.abort(), { once: true });
  // Every file's lines in time order (a.ndjson and b.ndjson interleaved, not one after the other); a
  // followed file's lines up to its end now, then each line as it is appended.
  const reading = inputs.map((input): MergeInput => {
    if (!o.follow || input.rotated) return { lines: fileLines(input.file) };
    let caught: () => void = () => undefined;
    const caughtUp = new Promise<void>((resolve) => (caught = resolve));
    // A notice (the file went missing, was replaced) ends its part in the merge too: it goes on live.
    return { lines: fileLines(input.file, { follow: true, signal: stop.signal, onCaughtUp: () => caught(), onNotice: () => caught() }), caughtUp };
  });
  const followOn = await mergeByTime(reading, (line) => history.append(line));
  const followed = o.follow ? inputs.filter((i) => !i.rotated) : [];
  const replay = replayLog !== null ? await uiReplay(history, replayLog, o) : null;
  const ui = await startUiServer({
    ...(replay ? { replay: replay.actions } : {}),
    port: o.uiPort,
    history,
    source: { kind: "files", follow: followed.length > 0, description: inputs.map((i) => i.file).join(", ") },
  });
  const files = (n: number): string => `${n} file${n === 1 ? "" : "s"}`;
  const what = `${history.end} record${history.end === 1 ? "" : "s"} from ${files(inputs.length)}${followed.length > 0 ? `, following ${files(followed.length)}` : ""}`;
  process.stderr.write(`mcp-wiretap: ${what}\n  UI: ${ui.url}\n`);
  onReady?.(ui.url);
  const follow = async (file: string): Promise<void> => {
    for await (const line of fileLines(file, { follow: true, signal: stop.signal })) history.append(line);
  };
  const goOn = async ({ input, pending }: FollowOn): Promise<void> => {
    const lines = reading[input]!.lines;
    for (let next = await (pending ?? lines.next()); !next.done; next = await lines.next()) history.append(next.value);
  };
  const readers = followOn.map(goOn);
  if (watched !== null) readers.push(watchForNewLogs(watched, new Set(inputs.map((i) => i.file)), follow, stop.signal, noteOnce));
  await new Promise<void>((resolve) => {
    const done = (): void => resolve();
    stop.signal.addEventListener("abort", done, { once: true });
    if (!signal) {
      process.once("SIGINT", () => stop.abort());
      process.once("SIGTERM", () => stop.abort());
    }
  });
  await ui.close();
  await replay?.sink.flush();
  await Promise.allSettled(readers);
}

/** `--allow-replay`: the one log given, appended to as `replay` appends to the log it read. */
function replayTarget(given: string[], inputs: { file: string; rotated: boolean }[]): string {
  const current = inputs.filter((i) => !i.rotated);
  if (given.length === 0 || current.length !== 1) throw new UsageError("--allow-replay: give one log file (the replays' records are appended to it)");
  return current[0]!.file;
}

/** The replays' records go through one sink of FILE, held while the UI runs (a log has one writer). */
async function uiReplay(history: RecordHistory, file: string, o: UiCommandOptions): Promise<{ actions: ReturnType<typeof replayActions>; sink: LogSink }> {
  let first = null;
  for await (const line of fileLines(file)) {
    first = parseRecord(line);
    break;
  }
  if (typeof first?.seq === "number") throw new UsageError(`--allow-replay: ${file} is audit-chained: a replay's records cannot join its chain (use mcp-wiretap replay --log-file)`);
  const sink = createLogSink({ file });
  // One policy for all of this UI's replays, loaded now (a bad --config is said at start): its rate-limit
  // counters and pins carry from one replay to the next, as a running proxy's do.
  const { loadPolicy } = await import("../../pipeline/record-pipeline.js");
  const policy = await loadPolicy(o.config, path.resolve(o.caDir!), (w) => sink.logger.warn(w)).catch(async (err: unknown) => {
    await sink.flush();
    throw err;
  });
  const actions = replayActions(history, {
    proxy: { caDir: o.caDir!, policy, upstreamCa: o.upstreamCa ?? [], insecureUpstream: o.insecureUpstream === true },
    records: runningLogStream((line) => sink.writeLine(line)),
    timeoutMs: 60_000,
  });
  return { actions, sink };
}
