import type { EvictionSink } from "../../bounds/evictions.js";
import type { RecordStream } from "../../sinks/record-stream.js";
import { RecordHistory } from "./record-history.js";
import type { HeldActions } from "./held-actions.js";
import { replayActions, type ReplaySettings } from "./replay-actions.js";
import { startUiServer, type RunningUi } from "./ui-server.js";

/** Lines the UI may hold back while it is busy, before the record stream drops (and counts) them. */
const LIVE_MAX_QUEUE = 50_000;
/** What a running proxy keeps for page loads: the proxy runs for days, the UI must not grow with it. */
const LIVE_MAX_LINES = 200_000;
const LIVE_MAX_BYTES = 256 * 1024 * 1024;

/** The UI of a running proxy: fed by the record stream, never by the file sink. */
export async function startLiveUi(records: RecordStream, port: number, onEvicted?: EvictionSink, intercept?: HeldActions, replay?: ReplaySettings): Promise<RunningUi> {
  const history = new RecordHistory(LIVE_MAX_LINES, LIVE_MAX_BYTES);
  const actions = replay ? { replay: replayActions(history, replay) } : {};
  const ui = await startUiServer({ port, history, source: { kind: "live", follow: true, description: "live proxy" }, ...(onEvicted ? { onEvicted } : {}), ...(intercept ? { intercept } : {}), ...actions }).catch((err: NodeJS.ErrnoException) => {
    if (err.code === "EADDRINUSE") err.message = `web UI port ${port} is in use`;
    // The advice after a failed listen names the option that chose this port.
    throw Object.assign(err, { flag: "--ui-port" });
  });
  const subscription = records.subscribe((line) => history.append(line), { maxQueue: LIVE_MAX_QUEUE, name: "web-ui" });
  return {
    ...ui,
    close: async () => {
      subscription.stop();
      await ui.close();
    },
  };
}
