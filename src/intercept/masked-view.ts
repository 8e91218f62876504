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
 * A mask moved elsewhere, or typed anew, stays the text it is. A list is matched place by place only while it
 * keeps its length: masks look alike, so once an entry is added or removed the masks after it would be put back
 * as the values of other entries (a secret the person deleted going out in the place of one they kept).
 */
export function unmaskEdit(edited: unknown, view: unknown, original: unknown): unknown {
  if (typeof edited === "string" && edited === view && view !== original) return original;
  if (Array.isArray(edited) && Array.isArray(view) && Array.isArray(original)) {
    if (edited.length !== view.length || view.length !== original.length) return edited;
    return edited.map((v, i) => unmaskEdit(v, view[i], original[i]));
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
