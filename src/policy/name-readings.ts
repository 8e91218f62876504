/**
 * The method and tool names of a message as lenient servers may read them. A server may normalise the names it
 * dispatches on (trim them, drop control and invisible characters, fold case, NFKC): `"Delete_Everything "` can
 * run `delete_everything`. Go's encoding/json also matches member names to fields ignoring case, the last
 * match winning: `{"name":"echo","Name":"delete_everything"}` calls `delete_everything` there.
 */

import { defineMember } from "../log/redact/members.js";
import { isPlainObject } from "../util/plain-object.js";

const IGNORABLE = /[\p{Cc}\p{Cf}]/gu;

/** Printable ASCII without spaces: already NFKC, nothing to drop or trim (the usual method and tool name). */
const PLAIN_ASCII = /^[\x21-\x7e]*$/;

export function looseName(name: string): string {
  if (PLAIN_ASCII.test(name)) return name.toLowerCase();
  return name.normalize("NFKC").replace(IGNORABLE, "").trim().toLowerCase();
}

type Members = Record<string, unknown>;

/**
 * The readings of `raw` that differ from it: its own method and `params.name` normalised, and the members Go
 * would read (case-folded, the last match) normalised too. Each is judged beside the message.
 */
export function nameReadings(raw: unknown): unknown[] {
  if (!isPlainObject(raw)) return [];
  const readings: unknown[] = [];
  const exactName = isPlainObject(raw.params) && Object.hasOwn(raw.params, "name") ? raw.params.name : undefined;
  const own = normalised(raw, raw.method, raw.params, exactName);
  if (own !== null) readings.push(own);
  const method = foldedMember(raw, "method");
  const params = foldedMember(raw, "params");
  const name = isPlainObject(params) ? foldedMember(params, "name") : undefined;
  if (method !== raw.method || params !== raw.params || name !== exactName) {
    const folded = normalised(raw, method, params, name);
    if (folded !== null) readings.push(folded);
  }
  return readings;
}

/** `message` with this method, params and tool name, the names normalised; null when that is `message` itself. */
function normalised(message: Members, method: unknown, given: unknown, name: unknown): Members | null {
  if (typeof method !== "string") return null;
  const params = isPlainObject(given) ? given : null;
  const looseMethod = looseName(method);
  const tool = params !== null && typeof name === "string" ? looseName(name) : null;
  const exactName = params !== null && Object.hasOwn(params, "name") ? params.name : undefined;
  if (looseMethod === message.method && given === message.params && (tool === null || tool === exactName)) return null;
  const copy: Members = { ...message, method: looseMethod };
  if (params !== null) {
    const p = { ...params };
    if (tool !== null) defineMember(p, "name", tool);
    copy.params = p;
  } else if (given !== undefined) copy.params = given;
  return copy;
}

/** The value of the last member whose name is `field` (lower-case ASCII) ignoring case, as Go's encoding/json folds it. */
export function foldedMember(object: Members, field: string): unknown {
  // Members in the order of the text (JSON.parse keeps it): Go assigns each in turn, so the last one counts.
  let value: unknown;
  for (const key of Object.keys(object)) {
    // Every code unit that folds to an ASCII letter is one code unit (ſ and the Kelvin sign included): a name
    // of another length cannot fold to `field`, and most members are skipped without a copy.
    if (key.length !== field.length) continue;
    if (key === field || key.toLowerCase().replaceAll("\u017f", "s").replaceAll("\u212a", "k") === field) value = object[key];
  }
  return value;
}
