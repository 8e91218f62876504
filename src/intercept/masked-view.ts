import { maskAtPointers, redactBody } from "../log/redact.js";
import { scanForSecrets } from "../log/secret-masks.js";
import { isPlainObject } from "../util/plain-object.js";

/**
 * A held message as the UI and the records show it: members with secret names and the secrets the detectors
 * find are masked (the record sink and the UI then remove the exchange's known credentials by value too).
 */
export function maskedMessage(value: unknown): unknown {
  return maskAtPointers(redactBody(value), scanForSecrets(value).masks);
}

/**
 * The message a person sent back from the UI, with every value they left masked put back: where the edit
 * still reads what the masked view showed at that place, and the view had masked it, the original goes out.
 * A mask moved elsewhere, or typed anew, stays the text it is.
 */
export function unmaskEdit(edited: unknown, view: unknown, original: unknown): unknown {
  if (typeof edited === "string" && edited === view && view !== original) return original;
  if (Array.isArray(edited) && Array.isArray(view) && Array.isArray(original)) {
    return edited.map((v, i) => (i < view.length && i < original.length ? unmaskEdit(v, view[i], original[i]) : v));
  }
  if (isPlainObject(edited) && isPlainObject(view) && isPlainObject(original)) {
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(edited)) {
      const known = Object.hasOwn(view, key) && Object.hasOwn(original, key);
      Object.defineProperty(out, key, { value: known ? unmaskEdit(v, view[key], original[key]) : v, enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return edited;
}
