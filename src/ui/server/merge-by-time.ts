/**
 * Several logs read as one, in time order: each log is in order already, so the next line is always the
 * earliest of the logs' next lines (a k-way merge, one line per log held). Equal times keep the order the
 * logs were given in; a line with no time goes with the line before it in its log.
 */

/** A log being read: its lines, and for a followed log the moment its existing lines are all read. */
export interface MergeInput {
  lines: AsyncIterator<string>;
  /** Resolves once the log has nothing more to read for now (a followed log); absent: read to its end. */
  caughtUp?: Promise<void>;
}

/** What `mergeByTime` leaves of a followed log: the read under way when it caught up, to go on with. */
export interface FollowOn {
  input: number;
  pending: Promise<IteratorResult<string>> | null;
}

const CAUGHT_UP: unique symbol = Symbol("caught up");

/**
 * Hands every line the inputs hold now to `emit`, earliest first; resolves with what remains of the
 * followed inputs, whose later lines the caller takes as they come.
 */
export async function mergeByTime(inputs: readonly MergeInput[], emit: (line: string) => void): Promise<FollowOn[]> {
  if (inputs.length === 1 && !inputs[0]!.caughtUp) {
    // One log read to its end: already in order, no time to read.
    for (let next = await inputs[0]!.lines.next(); !next.done; next = await inputs[0]!.lines.next()) emit(next.value);
    return [];
  }
  const heads: ({ line: string; time: number } | null)[] = [];
  const lastTime = inputs.map(() => -Infinity);
  const followOn: FollowOn[] = [];
  const caught = inputs.map((input) => input.caughtUp?.then((): typeof CAUGHT_UP => CAUGHT_UP));
  const advance = async (i: number): Promise<void> => {
    const read = inputs[i]!.lines.next();
    const next: IteratorResult<string> | typeof CAUGHT_UP = caught[i] ? await Promise.race([read, caught[i]!]) : await read;
    if (next === CAUGHT_UP) {
      heads[i] = null;
      followOn.push({ input: i, pending: read });
      return;
    }
    if (next.done) {
      heads[i] = null;
      if (caught[i]) followOn.push({ input: i, pending: null });
      return;
    }
    const time = timeOfLine(next.value) ?? lastTime[i]!;
    lastTime[i] = time;
    heads[i] = { line: next.value, time };
  };
  await Promise.all(inputs.map((_, i) => advance(i)));
  for (;;) {
    let best = -1;
    for (let i = 0; i < heads.length; i++) {
      const h = heads[i];
      if (h && (best < 0 || h.time < heads[best]!.time)) best = i;
    }
    if (best < 0) return followOn;
    emit(heads[best]!.line);
    await advance(best);
  }
}

/**
 * A record line's `time` (ms), or null. The logger writes `time` among the first members: it is read from
 * there without parsing the line when nothing before it opens an object or array; else the line is parsed.
 */
export function timeOfLine(line: string): number | null {
  const at = line.indexOf('"time":"');
  if (at > 0 && at < 200 && !/[{[]/.test(line.slice(1, at))) {
    const end = line.indexOf('"', at + 8);
    const ms = Date.parse(line.slice(at + 8, end));
    return Number.isNaN(ms) ? null : ms;
  }
  try {
    const time = (JSON.parse(line) as { time?: unknown }).time;
    const ms = typeof time === "string" ? Date.parse(time) : NaN;
    return Number.isNaN(ms) ? null : ms;
  } catch {
    return null;
  }
}
