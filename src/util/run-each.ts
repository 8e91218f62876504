/**
 * Runs every step even when one before it throws (each writes records of its own: one failure must not lose
 * the others), then throws what failed: the one error, or an AggregateError naming each.
 */
export function runEach(steps: Iterable<() => void>): void {
  const failures: unknown[] = [];
  for (const step of steps) {
    try {
      step();
    } catch (err) {
      failures.push(err);
    }
  }
  if (failures.length === 1) throw failures[0];
  if (failures.length > 1) throw new AggregateError(failures, failures.map(describe).join("; "));
}

function describe(err: unknown): string {
  return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
}
