/** The token and nonce of a page that may act; null on a read-only page (saved logs, an exported file). */
export function actionKeys(): { token: string; nonce: string } | null {
  const token = document.querySelector('meta[name="wiretap-token"]')?.getAttribute("content");
  const nonce = document.querySelector('meta[name="wiretap-nonce"]')?.getAttribute("content");
  return token && nonce ? { token, nonce } : null;
}

/** An action's answer: its status, and its JSON body when it sent one (else its text). */
export interface ActionAnswer {
  status: number;
  body: Record<string, unknown> | null;
  text: string;
}

/** POSTs an action with the page's token and nonce (src/ui/server/action-guard.ts checks them). */
export async function postAction(path: string, body: unknown): Promise<ActionAnswer> {
  const keys = actionKeys();
  if (!keys) return { status: 0, body: null, text: "this page is read-only" };
  const res = await fetch(path, {
    method: "POST",
    headers: { "Content-Type": "application/json", "X-Wiretap-Token": keys.token, "X-Wiretap-Nonce": keys.nonce },
    body: JSON.stringify(body),
  });
  const text = (await res.text()).trim();
  let json: Record<string, unknown> | null = null;
  try {
    const value: unknown = JSON.parse(text);
    if (value !== null && typeof value === "object" && !Array.isArray(value)) json = value as Record<string, unknown>;
  } catch {
    // Plain text: shown as it is.
  }
  return { status: res.status, body: json, text: text || `HTTP ${res.status}` };
}

/** What went wrong, said as the server said it; null when the action was done. */
export function actionError(answer: ActionAnswer): string | null {
  if (answer.status >= 200 && answer.status < 300) return null;
  return typeof answer.body?.error === "string" ? answer.body.error : answer.text;
}
