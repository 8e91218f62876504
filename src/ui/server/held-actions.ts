/**
 * What a UI attached to a running proxy can act on: the messages `--intercept` holds (src/intercept/ implements
 * it). A UI of saved logs has none, and so no action.
 */
export interface HeldActions {
  /** The held messages as the page lists them (masked). */
  list(): unknown[];
  /** False when the message is no longer held; a string: why the action is refused (the message stays held). */
  release(hold: string, action: ReleaseAction, edited?: unknown): boolean | string;
}

export type ReleaseAction = "forward" | "drop" | "edit";

/** The body of a release: which held message, and what to do with it. */
export interface ReleaseRequest {
  hold: string;
  action: ReleaseAction;
  /** `edit`: the message to send instead (as the page showed it: masked values left as they were are put back). */
  message?: unknown;
}

/** Reads a release request; a string says what is wrong with it. */
export function parseRelease(text: string): ReleaseRequest | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return "the body is not JSON";
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return "expected {hold, action, message?}";
  const { hold, action, message } = value as Record<string, unknown>;
  if (typeof hold !== "string") return "hold: the id of a held message (a string)";
  if (action !== "forward" && action !== "drop" && action !== "edit") return "action: forward, drop or edit";
  if (action === "edit" && message === undefined) return "edit: message is required";
  return { hold, action, ...(action === "edit" ? { message } : {}) };
}
