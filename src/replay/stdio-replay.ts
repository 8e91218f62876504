/**
 * A replay over stdio: the server command launched afresh behind the same tap and pipeline as
 * `mcp-wiretap stdio` (judged, enforce mode able to deny, recorded with `replayOf`), the replay its client.
 */
import { randomUUID } from "node:crypto";
import path from "node:path";
import { PassThrough, Writable } from "node:stream";
import { DEFAULT_MAX_INSPECT_BYTES } from "../body/index.js";
import { createLogSink } from "../log/logger.js";
import { stdioLineErrorRecord, stdioStartRecord, stopRecord } from "../records/lifecycle-records.js";
import { maxQueuedBytesFor, startRelay } from "../stdio/relay.js";
import { exitStatus } from "../util/exit-status.js";
import { redactLine } from "../stdio/stderr-recorder.js";
import { StdioTap } from "../stdio/stdio-tap.js";
import { ensurePrivateDir } from "../util/private-file.js";
import { createMessagePipeline, loadPolicy, payloadOptions } from "../pipeline/record-pipeline.js";
import { VERSION } from "../util/package-info.js";
import { StdioChannel } from "./stdio-channel.js";
import { replaySession, type SessionPlan, type SessionResult } from "./session.js";
import type { ReplayProxyOptions } from "./http-replay.js";

export interface StdioReplay {
  command: string[];
  /** `stdio:LABEL` as the capture named it. */
  server: string;
  replayOf: string;
  timeoutMs: number;
}

export async function replayOverStdio(r: StdioReplay, plan: SessionPlan, o: ReplayProxyOptions): Promise<SessionResult> {
  const [command, ...args] = r.command;
  const pinsDir = path.resolve(o.caDir);
  ensurePrivateDir(pinsDir, "--ca-dir");
  const sink = createLogSink({ ...(typeof o.logFile === "string" ? { file: path.resolve(o.logFile) } : { stream: o.logFile }), recordFields: { replayOf: r.replayOf } });
  const log = sink.logger;
  const { policyFile, policyConfig, policy } = await loadPolicy(o.config, pinsDir, (w) => log.warn(w));
  const pipeline = createMessagePipeline(policy, policyConfig, sink, payloadOptions(o));
  const session = randomUUID();
  const toServer = new PassThrough();
  let channel: StdioChannel | null = null;
  const fromServer = new Writable({
    write(chunk: Buffer, _encoding, done) {
      channel?.data(chunk);
      done();
    },
  });
  const maxInspectBytes = o.maxInspectBytes ?? DEFAULT_MAX_INSPECT_BYTES;
  const relay = startRelay(
    command!,
    args,
    (child) =>
      new StdioTap({
        pipeline,
        server: r.server,
        session,
        maxInspectBytes,
        ...(policy.enforcing ? { enforce: { removeDeniedTools: policyConfig.removeDeniedTools } } : {}),
        toServer: (b) => child.stdin!.write(b),
        toClient: (b) => fromServer.write(b),
        onError: (err, direction) => log.error(stdioLineErrorRecord(r.server, session, direction, err)),
      }),
    { stdin: toServer, stdout: fromServer, stderr: process.stderr, maxQueuedBytes: maxQueuedBytesFor(maxInspectBytes) },
    () => {},
  );
  channel = new StdioChannel((line) => toServer.write(line), () => toServer.end(), r.timeoutMs);
  log.info(
    stdioStartRecord({
      version: VERSION,
      server: r.server,
      session,
      command: r.command.map(redactLine),
      ...(relay.child.pid !== undefined ? { pid: relay.child.pid } : {}),
      policy: { file: policyFile, mode: policyConfig.mode },
      log: sink.target,
    }),
  );
  const ended = relay.done.then((end) => {
    channel!.closed(end.kind === "exit" ? "exited" : `could not be started (${end.error.code ?? end.error.message})`);
    return end;
  });
  try {
    return await replaySession(channel, plan);
  } finally {
    // stdin closed: a well-behaved server exits; one that does not is stopped.
    const stopper = setTimeout(() => relay.child.kill("SIGTERM"), 2000);
    const end = await ended;
    clearTimeout(stopper);
    const exitCode = end.kind === "exit" ? exitStatus(end.code, end.signal) : 127;
    pipeline.tracker.endSession(r.server, session, "replay done");
    pipeline.tracker.close();
    log.info(stopRecord({ server: r.server, session, reason: "replay done", exitCode, droppedRecords: sink.health.dropped }));
    await sink.flush();
  }
}
