import { useEffect, useRef, useState } from "preact/hooks";
import type { UiTokenReport } from "../../tokens/tokens-in-turns.js";

export type { UiTokenReport };

/** How often an open catalog or tool stats tab of a live page asks again while records arrive. */
const RECOUNT_MS = 10_000;

export interface TokenState {
  report: UiTokenReport | null;
  /** Why there is none (the server refused, or a page exported without it). */
  problem: string | null;
}

/**
 * The token estimates: embedded in an exported page (`export --html`), else asked of the server when `active`
 * (the catalog or tool stats is shown), never before. The tokenizer stays on the server: the page only
 * reads numbers.
 */
export function useTokens(active: boolean, cursor: number): TokenState {
  const [state, setState] = useState<TokenState>(() => ({ report: embedded(), problem: null }));
  const asked = useRef<{ cursor: number; at: number; busy: boolean }>({ cursor: -1, at: 0, busy: false });
  /** Bumped to look again: a count came back, or the wait between two counts is over. */
  const [tick, setTick] = useState(0);
  useEffect(() => {
    if (!active || document.getElementById("wiretap-data")) return;
    const a = asked.current;
    if (a.busy || a.cursor === cursor) return;
    const wait = a.cursor < 0 ? 0 : a.at + RECOUNT_MS - Date.now();
    if (wait > 0) {
      const timer = setTimeout(() => setTick((n) => n + 1), wait);
      return () => clearTimeout(timer);
    }
    a.busy = true;
    a.at = Date.now();
    fetch(`/api/tokens?upto=${cursor}`)
      .then(async (r) => {
        if (!r.ok) throw new Error((await r.text()).trim());
        a.cursor = Number(r.headers.get("X-Wiretap-Upto") ?? cursor);
        setState({ report: (await r.json()) as UiTokenReport, problem: null });
      })
      .catch((err: unknown) => {
        a.cursor = cursor;
        setState((s) => ({ ...s, problem: (err as Error).message }));
      })
      .finally(() => {
        a.busy = false;
        setTick((n) => n + 1);
      });
    return undefined;
  }, [active, cursor, tick]);
  return state;
}

function embedded(): UiTokenReport | null {
  const block = document.getElementById("wiretap-tokens");
  if (!block) return null;
  try {
    return JSON.parse(block.textContent ?? "null") as UiTokenReport;
  } catch {
    return null;
  }
}

/** What every token figure says of itself. */
export const tokenNote = (report: UiTokenReport): string => `estimated with ${report.encoding}; other models count differently`;
