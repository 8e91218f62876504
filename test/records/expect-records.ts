/**
 * Real records checked against the record contract: every record parses with the schema of its `event`
 * (there is one for every type), and the types a test means to produce are among them.
 */
import { expect } from "vitest";
import { RECORD_SCHEMAS, type RecordType } from "../../src/records/schemas.js";

/** Parses every record with its schema; fails on an unknown `event`, a schema failure, or a missing type. */
export function expectRecordsMatchSchemas(records: readonly object[], ...mustInclude: RecordType[]): void {
  const seen = new Set<string>();
  const failures: unknown[] = [];
  for (const record of records) {
    const event = (record as { event?: unknown }).event;
    const schema = typeof event === "string" && Object.hasOwn(RECORD_SCHEMAS, event) ? RECORD_SCHEMAS[event as RecordType] : undefined;
    if (!schema) {
      failures.push({ record, issue: "no schema for this event" });
      continue;
    }
    seen.add(event as string);
    const parsed = schema.safeParse(record);
    if (!parsed.success) failures.push({ record, issues: parsed.error.issues });
  }
  expect(failures).toEqual([]);
  for (const type of mustInclude) expect(seen, `a ${type} record`).toContain(type);
}
