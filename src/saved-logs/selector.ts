/**
 * `<flow>#<id>`: how one request of a log is named (`tail -v` prints it, `replay --call` takes it, a
 * replay's records carry it as `replayOf`). The id as JSON; a string id bare unless it reads like a number
 * or a quoted string.
 */
export function selectorOf(flow: string, id: unknown): string {
  return `${flow}#${typeof id === "string" && !/^-?\d/.test(id) && !id.startsWith('"') ? id : JSON.stringify(id)}`;
}
