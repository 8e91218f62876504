import type { Store } from "./model.js";

export interface FeedStatus {
  live: boolean;
  connected: boolean;
  source: string;
  /** Records received in the last second, and page updates drawn for them. */
  ratePerSecond: number;
  framesPerSecond: number;
  /** The server's index of the next record: the page holds what came before (downloads stop there). */
  cursor: number;
}

/**
 * Feeds the store: from the records embedded in an exported page, or from the UI server (the records it
 * holds, then its live SSE feed). `changed` is called at most once per animation frame, so a burst of
 * records is drawn once.
 */
export async function connect(store: Store, status: FeedStatus, changed: () => void): Promise<void> {
  const embedded = document.getElementById("wiretap-data");
  if (embedded) {
    status.source = "exported capture";
    const records = JSON.parse(embedded.textContent ?? "[]") as unknown[];
    for (const r of records) {
      if (r !== null && typeof r === "object" && !Array.isArray(r)) store.add(r as Record<string, unknown>, JSON.stringify(r));
    }
    changed();
    return;
  }
  const info = (await (await fetch("/api/info")).json()) as { kind: string; follow: boolean; description: string };
  status.source = info.description;
  status.live = info.follow;
  const response = await fetch("/api/records");
  const first = Number(response.headers.get("X-Wiretap-First") ?? "0");
  store.skipped += Number(response.headers.get("X-Wiretap-Skipped") ?? "0");
  const lines = await readLines(response, store, changed);
  status.cursor = first + lines;
  changed();
  if (!info.follow) return;
  let received = 0;
  let frames = 0;
  let frameScheduled = false;
  const frame = (): void => {
    if (frameScheduled) return;
    frameScheduled = true;
    requestAnimationFrame(() => {
      frameScheduled = false;
      frames++;
      changed();
    });
  };
  setInterval(() => {
    status.ratePerSecond = received;
    status.framesPerSecond = frames;
    received = 0;
    frames = 0;
    changed();
  }, 1000);
  // Reconnects itself from where it got to: EventSource's own retry would ask for the same start again.
  let cursor = first + lines;
  const open = (): void => {
    const source = new EventSource(`/api/feed?from=${cursor}`);
    source.onopen = () => {
      status.connected = true;
      changed();
    };
    source.onerror = () => {
      source.close();
      status.connected = false;
      changed();
      setTimeout(open, 2_000);
    };
    source.onmessage = (e: MessageEvent<string>) => {
      const batch = JSON.parse(e.data) as { from: number; skipped: number; lines: string[] };
      store.skipped += batch.skipped;
      for (const line of batch.lines) store.addLine(line);
      cursor = batch.from + batch.lines.length;
      status.cursor = cursor;
      received += batch.lines.length;
      frame();
    };
  };
  open();
}

/** Reads NDJSON as it arrives, drawing progress now and then. Returns the number of lines read. */
async function readLines(response: Response, store: Store, changed: () => void): Promise<number> {
  const reader = response.body?.getReader();
  if (!reader) return 0;
  const decoder = new TextDecoder();
  let rest = "";
  let count = 0;
  let lastDraw = performance.now();
  for (;;) {
    const { done, value } = await reader.read();
    const text = rest + (done ? decoder.decode() : decoder.decode(value, { stream: true }));
    const parts = text.split("\n");
    rest = done ? "" : (parts.pop() ?? "");
    for (const line of parts) {
      if (line === "") continue;
      count++;
      store.addLine(line);
    }
    if (done) break;
    if (performance.now() - lastDraw > 500) {
      lastDraw = performance.now();
      changed();
    }
  }
  return count;
}
