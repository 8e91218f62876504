import { useEffect, useState } from "preact/hooks";
import { actionError, postAction } from "./post-action.js";

export { actionKeys } from "./post-action.js";

/** A held message as GET /api/intercept lists it (src/intercept/interceptor.ts, HeldView). */
interface Held {
  hold: string;
  direction: string;
  method?: string;
  tool?: string;
  id?: string | number | null;
  server: string;
  heldAt: number;
  bytes: number;
  message: unknown;
}

/** How often the list of held messages is asked for while the page is open. */
const POLL_MS = 400;

/** POSTs an action; the error text, or null when done. */
export async function act(path: string, body: unknown): Promise<string | null> {
  return actionError(await postAction(path, body));
}

/** The messages `--intercept` holds: each forwarded as it is, edited then forwarded, or dropped. */
export function HeldMessages() {
  const [held, setHeld] = useState<Held[]>([]);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | null = null;
    const poll = async (): Promise<void> => {
      try {
        const res = await fetch("/api/intercept");
        if (res.ok) setHeld(((await res.json()) as { held: Held[] }).held);
      } catch {
        // The next poll tries again.
      }
      if (!stopped) timer = setTimeout(() => void poll(), POLL_MS);
    };
    void poll();
    return () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    };
  }, []);
  if (held.length === 0 && error === null) return null;
  const release = async (hold: string, action: "forward" | "drop" | "edit", message?: unknown): Promise<void> => {
    const problem = await act("/api/action/release", { hold, action, ...(action === "edit" ? { message } : {}) });
    setError(problem);
    if (problem === null) setHeld((h) => h.filter((x) => x.hold !== hold));
  };
  return (
    <section class="held" aria-label="held messages">
      <h2>
        {held.length} held message{held.length === 1 ? "" : "s"} <span class="muted">(--intercept: dropped when not released in time)</span>
      </h2>
      {error !== null ? <div class="warn">{error}</div> : null}
      {held.map((h) => (
        <HeldItem key={h.hold} held={h} onRelease={release} onError={setError} />
      ))}
    </section>
  );
}

function HeldItem({ held, onRelease, onError }: { held: Held; onRelease: (hold: string, action: "forward" | "drop" | "edit", message?: unknown) => Promise<void>; onError: (e: string | null) => void }) {
  const [text, setText] = useState(() => JSON.stringify(held.message, null, 2));
  const edited = text !== JSON.stringify(held.message, null, 2);
  const editThenForward = (): void => {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      onError(`not JSON: ${(err as Error).message}`);
      return;
    }
    void onRelease(held.hold, "edit", value);
  };
  return (
    <div class="held-item" data-hold={held.hold}>
      <div class="held-head">
        <span>{held.direction === "client_to_server" ? "→" : "←"}</span> <span class="c-method">{held.method ?? "?"}</span> <span class="c-tool">{held.tool ?? ""}</span>{" "}
        <span class="muted">
          #{held.id ?? "–"} · {held.server} · {held.bytes} B
        </span>
      </div>
      <textarea class="held-json" spellcheck={false} value={text} onInput={(e) => setText((e.currentTarget as HTMLTextAreaElement).value)} aria-label="held message JSON" />
      <div class="held-actions">
        <button type="button" class="forward" onClick={() => void onRelease(held.hold, "forward")} disabled={edited} title={edited ? "edited: use edit then forward" : ""}>
          forward
        </button>
        <button type="button" class="edit" onClick={editThenForward}>
          edit then forward
        </button>
        <button type="button" class="drop" onClick={() => void onRelease(held.hold, "drop")}>
          drop
        </button>
      </div>
    </div>
  );
}
