import { visibleText } from "../log/escape-line.js";

/**
 * ANSI colours, no dependency. Whether to use them: `FORCE_COLOR` (set, and not "0" or "false") forces them
 * on and `FORCE_COLOR=0` off; otherwise `NO_COLOR` (set and non-empty) turns them off; otherwise only when
 * stdout is a terminal. Empty variables count as unset (https://no-color.org, Node's own rules).
 */
export function useColor(env: NodeJS.ProcessEnv, isTTY: boolean): boolean {
  const force = env.FORCE_COLOR;
  if (force !== undefined && force !== "") return !(force === "0" || force.toLowerCase() === "false");
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  return isTTY;
}

export type Style = "dim" | "bold" | "red" | "green" | "yellow" | "blue" | "magenta" | "cyan" | "gray" | "inverseRed" | "inverseYellow";

const CODES: Record<Style, [number, number]> = {
  dim: [2, 22],
  bold: [1, 22],
  red: [31, 39],
  green: [32, 39],
  yellow: [33, 39],
  blue: [34, 39],
  magenta: [35, 39],
  cyan: [36, 39],
  gray: [90, 39],
  inverseRed: [41, 49],
  inverseYellow: [43, 49],
};

export type Paint = (style: Style | Style[], text: string) => string;

/** `paint(style, text)`: the text in that style, or unchanged when colour is off (or the text empty). */
export function painter(enabled: boolean): Paint {
  if (!enabled) return (_style, text) => text;
  return (style, text) => {
    if (text === "") return text;
    let out = text;
    for (const s of Array.isArray(style) ? style : [style]) {
      const [open, close] = CODES[s];
      out = `\u001b[${open}m${out}\u001b[${close}m`;
    }
    return out;
  };
}

/**
 * Control, bidi and invisible format characters in logged text (a hostile server name, a stray escape
 * sequence in a bad line) must not drive or disguise the terminal: shown as `\uXXXX` (a tab as a space, a
 * newline as `\n`). The set is the log's own (escape-line.ts).
 */
export function printable(text: string): string {
  return visibleText(text);
}
