import pino, { type Logger } from "pino";

const { asJsonSym, chindingsSym, endSym, errorKeySym, lsCacheSym, nestedKeySym, serializersSym, stringifiersSym } = pino.symbols;

type AsJson = (this: Logger, obj: Record<string, unknown>, msg: unknown, num: number, time: string) => string;
type Internals = Record<symbol, unknown>;

/**
 * Serializes each record with one JSON.stringify of the whole object, where pino would stringify member by
 * member (one JSON.stringify per object member, its own escaping loop per string). `prepare` runs first, once
 * (what pino's `formatters.log` did: the record guard).
 *
 * The text is pino's: its head (level, time), then the members in the same order, each as JSON.stringify
 * writes it, undefined and function members left out, non-finite numbers as null. The one difference: pino
 * leaves a lone surrogate in a short string raw where JSON.stringify writes `\udXXX`, and the line escaping
 * that follows (escape-line.ts) writes that same `\udXXX`. Anything pino treats otherwise (a message, an
 * error member, a value JSON.stringify refuses, serializers, a nested key) goes through pino's own code.
 */
export function serializeRecordsOnce(logger: Logger, prepare: (record: Record<string, unknown>) => Record<string, unknown>): void {
  const internals = logger as unknown as Internals;
  const general = internals[asJsonSym] as AsJson;
  const plainRoot = writesMembersAsTheyAre(internals);
  const wholeRecord: AsJson = function (this: Logger, obj, msg, num, time) {
    const record = prepare(obj);
    const self = this as unknown as Internals;
    const plain = this === logger ? plainRoot : writesMembersAsTheyAre(self);
    if (msg !== undefined || !plain || !isPlainRecord(record) || Object.hasOwn(record, self[errorKeySym] as string)) {
      return general.call(this, record, msg, num, time);
    }
    let json: string;
    try {
      json = JSON.stringify(record);
    } catch {
      return general.call(this, record, msg, num, time); // a cycle, a bigint: pino's safe fallback, member by member
    }
    const head = (self[lsCacheSym] as Record<number, string>)[num]! + time + (self[chindingsSym] as string);
    return json.length === 2 ? head + (self[endSym] as string) : `${head},${json.slice(1, -1)}${self[endSym] as string}`;
  };
  internals[asJsonSym] = wholeRecord;
}

/** A record JSON.stringify writes as pino would: a plain object, without its own `toJSON`. */
function isPlainRecord(value: Record<string, unknown>): boolean {
  if (typeof value !== "object" || value === null || Array.isArray(value) || typeof value.toJSON === "function") return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Without a nested key, redaction or serializers of its own, pino writes each member as it is (bar `err`). */
function writesMembersAsTheyAre(self: Internals): boolean {
  if (self[nestedKeySym]) return false;
  const stringifiers = self[stringifiersSym] as object | undefined;
  if (stringifiers && Reflect.ownKeys(stringifiers).length > 0) return false;
  const serializers = self[serializersSym] as Record<string, unknown>;
  for (const key in serializers) if (key !== "err") return false;
  return true;
}
