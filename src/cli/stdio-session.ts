import { closeSync } from "node:fs";
import path from "node:path";
import { DEFAULT_MAX_INSPECT_BYTES } from "../body/limits.js";
import { createLogSink, type LogSink } from "../log/logger.js";
import { openLaunchLog, stdioLogFolder } from "../stdio/log-folder.js";
import { maxQueuedBytesFor, relayServer, type RelayEnd, type SpawnedServer } from "../stdio/relay.js";
import { exitStatus } from "../util/exit-status.js";
import { redactLine, StderrRecorder } from "../stdio/stderr-recorder.js";
import { StdioTap } from "../stdio/stdio-tap.js";
import { spawnErrorRecord, stdioLineErrorRecord, stdioStartRecord, stopRecord } from "../records/lifecycle-records.js";
import { VERSION } from "../util/package-info.js";
import { createMessagePipeline, loadPolicy, payloadOptions } from "../pipeline/record-pipeline.js";
import { randomUuid } from "../util/lazy-crypto.js";
import { uiPortOf } from "./proxy-options.js";
import { createInterceptor, type InterceptSettings } from "../intercept/create-interceptor.js";
import type { HeldActions } from "../ui/server/held-actions.js";
import type { StdioOptions } from "./stdio-command.js";

/** A launch whose server stdio-launch.ts has spawned: what it was started as, and where its pins go. */
export interface Launch {
  command: string;
  args: string[];
  label: string;
  pinsDir: string;
  /** --intercept, checked before the server started. */
  interceptSettings: InterceptSettings | undefined;
}

/**
 * Loads the policy, the pipeline and the log sink, then joins the already started server to the client
 * through the tap; resolves with the exit code once the server has exited and the records are written.
 */
export async function relayLaunch(spawned: SpawnedServer, { command, args, label, pinsDir, interceptSettings }: Launch, o: StdioOptions): Promise<number> {
  const server = `stdio:${label}`;
  // Like a Streamable HTTP session id: unique, and told apart by its first characters.
  const session = randomUuid();
  const { policyFile, policyConfig, policy } = await loadPolicy(o.config, pinsDir, (w) => log.warn(w), null, undefined, o.mode);
  const sink = openSink(o, label, pinsDir);
  const log = sink.logger;
  const pipeline = createMessagePipeline(policy, policyConfig, sink, payloadOptions(o));
  const intercept = interceptSettings ? createInterceptor(interceptSettings, sink, payloadOptions(o), o.maxInspectBytes ?? DEFAULT_MAX_INSPECT_BYTES) : undefined;
  const ui = await startUi(sink, uiPortOf(o), intercept);
  const maxInspectBytes = o.maxInspectBytes ?? DEFAULT_MAX_INSPECT_BYTES;
  const stderrRecorder = new StderrRecorder(log, { server, session });
  const shownCommand = [command, ...args].map(redactLine);

  const relay = relayServer(
    spawned,
    (child) =>
      new StdioTap({
        pipeline,
        server,
        session,
        maxInspectBytes,
        ...(policy.enforcing ? { enforce: { removeDeniedTools: policyConfig.removeDeniedTools } } : {}),
        ...(intercept ? { intercept } : {}),
        toServer: (b) => child.stdin!.write(b),

        toClient: (b) => process.stdout.write(b),
        onError: (err, direction) => log.error(stdioLineErrorRecord(server, session, direction, err)),
      }),
    { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, maxQueuedBytes: maxQueuedBytesFor(maxInspectBytes) },
    (chunk) => stderrRecorder.data(chunk),
  );
  log.info(
    stdioStartRecord({
      version: VERSION,
      server,
      session,
      command: shownCommand,
      ...(relay.child.pid !== undefined ? { pid: relay.child.pid } : {}),
      policy: { file: policyFile, mode: policyConfig.mode },
      log: sink.target,
    }),
  );
  // Signals are forwarded to the server by stdio-launch.ts, from its spawn to its exit.
  const end = await relay.done;
  intercept?.queue.dropAll("the server exited");
  stderrRecorder.end();
  const code = end.kind === "exit" ? exitStatus(end.code, end.signal) : spawnFailed(end, command, log, server);
  const reason = end.kind === "exit" ? (end.signal ? `server exited on ${end.signal}` : `server exited with code ${end.code}`) : "server did not start";
  pipeline.tracker.endSession(server, session, reason);
  pipeline.tracker.close();
  policy.flushEvictions();
  // `stop` stays the last record (verify-log checks it): the UI's last drop counts go before it.
  ui?.flushEvictions();
  log.info(stopRecord({ server, session, reason, exitCode: code, droppedRecords: sink.health.dropped }));
  await ui?.close();
  await sink.flush();
  await Promise.all([drained(process.stdout), drained(process.stderr)]);
  return code;
}

/**
 * Resolves once what was written to `stream` has left the process (bounded): pipes are asynchronous on
 * macOS, and an exit right after the server's last answer must not cut it off.
 */
function drained(stream: NodeJS.WriteStream, timeoutMs = 2000): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, timeoutMs);
    timer.unref();
    stream.write("", () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/**
 * The live web UI of this launch, when asked for. The server matters more than its UI: a UI that cannot be
 * served (its port taken by another launch, say) is said on stderr and in the log, and the relay goes on.
 */
async function startUi(sink: LogSink, port: number | undefined, intercept: HeldActions | undefined): Promise<{ close(): Promise<void>; flushEvictions(): void } | null> {
  if (port === undefined) return null;
  try {
    const ui = await (await import("../ui/server/live-ui.js")).startLiveUi(sink.records, port, (r) => sink.logger.warn(r), intercept);
    process.stderr.write(`mcp-wiretap stdio: UI: ${ui.url}\n`);
    return ui;
  } catch (err) {
    const message = `web UI not served: ${(err as Error).message}`;
    process.stderr.write(`mcp-wiretap stdio: ${message}\n`);
    sink.logger.warn({ event: "ui_error", message });
    return null;
  }
}

function openSink(o: StdioOptions, label: string, pinsDir: string): LogSink {
  const common = {
    ...(o.auditChain ? { auditChain: { dir: path.resolve(o.auditDir ?? path.join(pinsDir, "audit")) } } : {}),
    onError: o.onLogError ?? "pass",
  } as const;
  const rotation = { ...(o.logMaxSize ? { maxSize: o.logMaxSize } : {}), ...(o.logKeep ? { keep: o.logKeep } : {}) };
  if (o.logFile) return createLogSink({ file: path.resolve(o.logFile), ...rotation, ...common });
  // Created here, exclusively and never through a symlink; the writer then appends to it.
  const launch = openLaunchLog(stdioLogFolder(), label);
  closeSync(launch.fd);
  return createLogSink({ file: launch.file, ...rotation, ...common });
}

function spawnFailed(end: Extract<RelayEnd, { kind: "spawn_error" }>, command: string, log: LogSink["logger"], server: string): number {
  const code = end.error.code ?? "error";
  const notFound = code === "ENOENT";
  const what = notFound ? "not found (is it on PATH? an absolute path avoids the question)" : `cannot be run (${code})`;
  process.stderr.write(`mcp-wiretap: ${command}: ${what}\n`);
  log.error(spawnErrorRecord(server, redactLine(command), code, what));
  return notFound ? 127 : 126;
}
