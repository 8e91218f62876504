/**
 * The request methods of the MCP specification, every revision from 2024-11-05 to 2026-07-28: the values
 * metrics name. Any other method a peer sends is counted as `other`, so that metric attribute sets, which the
 * SDK keeps for the process's life, stay a small fixed set whatever a peer invents.
 */
const MCP_REQUEST_METHODS: ReadonlySet<string> = new Set([
  "initialize",
  "ping",
  "tools/list",
  "tools/call",
  "prompts/list",
  "prompts/get",
  "resources/list",
  "resources/templates/list",
  "resources/read",
  "resources/subscribe",
  "resources/unsubscribe",
  "logging/setLevel",
  "completion/complete",
  "sampling/createMessage",
  "roots/list",
  "elicitation/create",
  "tasks/get",
  "tasks/result",
  "tasks/list",
  "tasks/cancel",
  "server/discover",
  "subscriptions/listen",
]);

export const OTHER_METHOD = "other";

/** The method as metrics name it: itself when the specification defines it, else `other`. */
export function methodForMetrics(method: string): string {
  return MCP_REQUEST_METHODS.has(method) ? method : OTHER_METHOD;
}
