import { useEffect, useState } from "preact/hooks";
import "./replay.css";
import { answerDiff } from "../../replay/answer-diff.js";
import { obj, str } from "../../saved-logs/filters.js";
import { selectorOf } from "../../saved-logs/selector.js";
import { messageOf } from "./copy.js";
import { JsonView } from "./json-view.js";
import type { Msg, Store } from "./model.js";
import { actionError, actionKeys, postAction } from "./post-action.js";

/** How long the page waits after a keystroke before the edit is checked against the tool's inputSchema. */
const CHECK_DELAY_MS = 200;

/** What /api/action/replay-check says of a call and its (edited) params. */
interface Check {
  confirm: { tool: string; destructive: boolean; reason: string } | null;
  schema: { errors: string[] } | { unchecked: string };
}

/** Whether this page may replay (a UI of a running proxy, or `ui --allow-replay`): the server says so in the page. */
export function canReplay(): boolean {
  return document.querySelector('meta[name="wiretap-replay"]') !== null && actionKeys() !== null;
}

/** A client's request the server could be sent again: over HTTP, with a flow and an id. */
export function replayable(msg: Msg): boolean {
  const r = msg.record;
  return r.kind === "request" && r.direction === "client_to_server" && r.transport !== "stdio" && str(r.flow) !== null && (typeof r.id === "string" || typeof r.id === "number");
}

/**
 * Replay and Edit and replay of one request: the replay runs on the server (src/ui/server/replay-actions.ts,
 * as `mcp-wiretap replay`), is recorded, and so comes back in the feed; it is shown here beside the original,
 * with a diff of the answers.
 */
export function ReplayPanel({ msg, store }: { msg: Msg; store: Store }) {
  const r = msg.record;
  const selector = selectorOf(str(r.flow)!, r.id);
  const captured = JSON.stringify(r.params ?? {}, null, 2);
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState(captured);
  const [header, setHeader] = useState("");
  const [check, setCheck] = useState<Check | null>(null);
  const [asking, setAsking] = useState<{ params: unknown; confirm: NonNullable<Check["confirm"]> } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [sentAt, setSentAt] = useState<number | null>(null);

  let parsed: { value: unknown } | { problem: string };
  try {
    const value: unknown = JSON.parse(text);
    parsed = value !== null && typeof value === "object" && !Array.isArray(value) ? { value } : { problem: "the params are a JSON object" };
  } catch (err) {
    parsed = { problem: `not JSON: ${(err as Error).message}` };
  }
  const params = "value" in parsed ? parsed.value : null;

  // Checked on the server against the captured inputSchema (ajv there: this page's policy forbids compiling code).
  useEffect(() => {
    if (!editing || params === null) return;
    const timer = setTimeout(() => {
      void postAction("/api/action/replay-check", { call: selector, params }).then((a) => {
        if (a.status === 200 && a.body) setCheck(a.body as unknown as Check);
        else setError(actionError(a));
      });
    }, CHECK_DELAY_MS);
    return () => clearTimeout(timer);
  }, [editing, text]);

  const send = async (edited: unknown, confirmed: boolean): Promise<void> => {
    setBusy(true);
    setError(null);
    const since = store.records;
    const a = await postAction("/api/action/replay", { call: selector, ...(edited !== undefined ? { params: edited } : {}), ...(header.trim() ? { header } : {}), confirmed }).catch((err: unknown) => ({ status: 0, body: null, text: String(err) }));
    setBusy(false);
    const confirm = obj(a.body?.confirm);
    if (a.status === 409 && confirm) {
      setAsking({ params: edited, confirm: confirm as unknown as NonNullable<Check["confirm"]> });
      return;
    }
    setAsking(null);
    const problem = actionError(a);
    if (problem !== null) return setError(problem);
    setSentAt(since);
  };

  return (
    <div class="replay">
      <div class="replay-buttons">
        <button type="button" class="replay-run" disabled={busy} onClick={() => void send(undefined, false)} title="send this request again in a fresh session">
          Replay
        </button>
        <button type="button" class="replay-edit" disabled={busy} onClick={() => setEditing(!editing)}>
          Edit and replay
        </button>
        <input
          type="password"
          class="replay-header"
          autocomplete="off"
          spellcheck={false}
          placeholder="header for this replay only, e.g. Authorization: Bearer …"
          aria-label="header for this replay only (never recorded)"
          value={header}
          onInput={(e) => setHeader((e.currentTarget as HTMLInputElement).value)}
        />
      </div>
      {editing ? (
        <div class="replay-editor">
          <textarea class="replay-params" spellcheck={false} aria-label="params to replay" value={text} onInput={(e) => setText((e.currentTarget as HTMLTextAreaElement).value)} />
          <SchemaNote problem={"problem" in parsed ? parsed.problem : null} check={check} />
          <button type="button" class="replay-send" disabled={params === null || busy} onClick={() => void send(params, false)}>
            Send
          </button>
        </div>
      ) : null}
      {asking ? (
        <div class="replay-confirm warn" role="alertdialog">
          Replay tool <strong>{asking.confirm.tool}</strong>
          {asking.confirm.destructive ? <strong> — destructive, by its own annotation</strong> : null}? It runs again on the server ({asking.confirm.reason}).{" "}
          <button type="button" class="replay-confirm-yes" onClick={() => void send(asking.params, true)}>
            Replay it
          </button>{" "}
          <button type="button" onClick={() => setAsking(null)}>
            Cancel
          </button>
        </div>
      ) : null}
      {busy ? <p class="muted">replaying…</p> : null}
      {error !== null ? <div class="warn replay-error">{error}</div> : null}
      {sentAt !== null ? <ReplayResult original={msg} selector={selector} since={sentAt} store={store} /> : null}
    </div>
  );
}

function SchemaNote({ problem, check }: { problem: string | null; check: Check | null }) {
  if (problem !== null) return <div class="replay-schema invalid">{problem}</div>;
  if (check === null) return null;
  if ("unchecked" in check.schema) return <div class="replay-schema muted">{check.schema.unchecked}</div>;
  if (check.schema.errors.length === 0) return <div class="replay-schema ok">matches the tool's captured inputSchema</div>;
  return (
    <ul class="replay-schema invalid">
      {check.schema.errors.map((e) => (
        <li key={e}>{e}</li>
      ))}
    </ul>
  );
}

/** The replay's exchange as recorded (from the feed), beside the original's answer, with their diff. */
function ReplayResult({ original, selector, since, store }: { original: Msg; selector: string; since: number; store: Store }) {
  const method = str(original.record.method);
  let replay: Msg | undefined;
  for (let i = store.msgs.length - 1; i >= 0; i--) {
    const m = store.msgs[i]!;
    if (m.index < since) break;
    if (m.record.replayOf === selector && m.record.kind === "request" && str(m.record.method) === method) {
      replay = m;
      break;
    }
  }
  const answer = replay?.group?.answer ?? null;
  if (!answer) return <p class="muted replay-waiting">replayed; waiting for its records in the feed…</p>;
  const replayed = messageOf(answer.record);
  const before = original.group?.answer?.record ?? null;
  return (
    <div class="replay-result">
      <h4>
        replay ({selector}) <span class={`badge s-${replay!.group!.status}`}>{replay!.group!.status}</span>
      </h4>
      <div class="replay-side">
        <div>
          <h5>original</h5>
          <JsonView value={before ? (before.result ?? before.error) : null} />
        </div>
        <div>
          <h5>replay</h5>
          <JsonView value={answer.record.result ?? answer.record.error} />
        </div>
      </div>
      <pre class="replay-diff">{replayed ? answerDiff(before, replayed) : "(the replay's answer was not recorded whole: no diff)"}</pre>
    </div>
  );
}
