import { useState } from "preact/hooks";
import { isHttps, obj, str, type LogRecord } from "../../saved-logs/filters.js";
import { curlOf, messageOf } from "./copy.js";
import { JsonView } from "./json-view.js";
import { canReplay, ReplayPanel, replayable } from "./replay.js";
import { arrow, bytesOf, bytesText, idText, msText, timeOf } from "./format.js";
import type { Msg, Store } from "./model.js";
import { num } from "../../saved-logs/filters.js";

/** Everything the records hold about one message and its exchange. */
export function Detail({ msg, store, onClose }: { msg: Msg; store: Store; onClose: () => void }) {
  const g = msg.group;
  const parts: Msg[] = g ? [g.request, ...g.asides, ...(g.answer ? [g.answer] : [])] : [msg];
  return (
    <aside class="detail" aria-label="message detail">
      <header>
        <strong>{str(msg.record.method) ?? str(msg.record.kind) ?? "message"}</strong>
        {str(msg.record.tool) ? <span class="tool-name"> {str(msg.record.tool)}</span> : null}
        {g ? <span class={`badge s-${g.status}`}>{g.status}</span> : null}
        <button type="button" class="close" onClick={onClose} title="close (Esc)">
          ×
        </button>
      </header>
      {g && !g.answer ? <p class="warn">No answer recorded: the request {g.status === "unanswered" ? "is unanswered" : g.status === "cancelled" ? "was cancelled" : "is still pending"}.</p> : null}
      {parts.map((m) => (
        <Part key={m.index} msg={m} store={store} focused={m === msg} />
      ))}
    </aside>
  );
}

function Part({ msg, store, focused }: { msg: Msg; store: Store; focused: boolean }) {
  const r = msg.record;
  const payload = (["params", "result", "error", "message"] as const).filter((k) => r[k] !== undefined);
  const http = str(r.flow) ? store.http.get(str(r.flow) as string) : undefined;
  return (
    <section class={`part${focused ? " focused" : ""}`}>
      <h3>
        {arrow(r)} {str(r.kind)} {idText(r.id)} <span class="muted">{timeOf(r)}</span>
      </h3>
      <dl class="facts">
        <Fact name="replay of" value={str(r.replayOf)} />
        <Fact name="server" value={str(r.server)} />
        <Fact name="session" value={str(r.session)} />
        <Fact name="transport" value={str(r.transport)} />
        <Fact name="protocol" value={str(r.protocolVersion)} />
        <Fact name="latency" value={msText(num(r.latencyMs)) || null} />
        <Fact name="size" value={bytesText(bytesOf(r)) || null} />
        <Fact name="argsHash" value={str(r.argsHash)} />
        <Fact name="task" value={taskText(obj(r.task))} />
        <Fact name="apps" value={appsText(r.apps)} />
        <Fact name="reason" value={str(r.reason)} />
      </dl>
      {payload.map((k) => (
        <div key={k} class="payload">
          <h4>{k}</h4>
          <JsonView value={r[k]} />
        </div>
      ))}
      <AppSources result={obj(r.result)} />
      <Copies record={r} https={http ? isHttps(http) : true} />
      {replayable(msg) && canReplay() ? <ReplayPanel msg={msg} store={store} /> : null}
      <Decision decision={obj(r.decision)} />
      {http ? <Http http={http} /> : null}
    </section>
  );
}

/** The MCP Apps a message names: tool → ui:// URI, or the URI read with its digest. */
function appsText(apps: unknown): string | null {
  if (!Array.isArray(apps) || apps.length === 0) return null;
  return apps
    .map((a: unknown) => obj(a))
    .filter((a): a is LogRecord => a !== undefined)
    .map((a) => [str(a.tool), str(a.uri), str(a.sha256)?.slice(0, 19)].filter((x) => x !== null).join(" → "))
    .join("; ");
}

/** An app's HTML as text (Preact escapes it): shown, never rendered. */
function AppSources({ result }: { result: LogRecord | undefined }) {
  const contents = Array.isArray(result?.contents) ? result.contents : [];
  const apps = contents
    .map((c: unknown) => obj(c))
    .filter((c): c is LogRecord => c !== undefined && typeof c.text === "string" && (str(c.uri)?.startsWith("ui://") === true || str(c.mimeType)?.startsWith("text/html;profile=mcp-app") === true));
  if (apps.length === 0) return null;
  return (
    <>
      {apps.map((c, i) => (
        <div key={i} class="payload app-source">
          <h4>app source {str(c.uri)} (text, not rendered)</h4>
          <pre>{c.text as string}</pre>
        </div>
      ))}
    </>
  );
}

/** Where the task stands on this message: its id, status, end with the call's latency, result, problem. */
function taskText(task: LogRecord | undefined): string | null {
  if (!task) return null;
  const end = obj(task.end);
  const parts = [
    str(task.id),
    task.created === true ? "created" : null,
    str(task.status),
    end ? `ended ${str(end.status) ?? ""} after ${msText(num(end.callLatencyMs))}` : null,
    task.final === true ? "final result" : null,
    str(task.problem) ? `⚠ ${str(task.problem)}` : null,
  ];
  return parts.filter((p) => p !== null && p !== "").join(" · ");
}

/** Copy JSON and Copy as curl: to the clipboard when the page may write it, and shown to select either way. */
function Copies({ record, https }: { record: LogRecord; https: boolean }) {
  const [shown, setShown] = useState<string | null>(null);
  const message = messageOf(record);
  const curl = curlOf(record, https);
  if (message === null) return null;
  const copy = (text: string): void => {
    setShown(text);
    void navigator.clipboard?.writeText(text).catch(() => undefined);
  };
  return (
    <div class="copies">
      <button type="button" class="copy-json" onClick={() => copy(JSON.stringify(message, null, 2))}>
        copy JSON
      </button>
      {curl !== null ? (
        <button type="button" class="copy-curl" onClick={() => copy(curl)} title="credentials are not in the log: add them">
          copy as curl
        </button>
      ) : null}
      {shown !== null ? <textarea class="copied" readOnly value={shown} aria-label="copied text" /> : null}
    </div>
  );
}

function Fact({ name, value }: { name: string; value: string | null }) {
  if (value === null || value === "") return null;
  return (
    <>
      <dt>{name}</dt>
      <dd>{value}</dd>
    </>
  );
}

function Decision({ decision }: { decision: LogRecord | undefined }) {
  if (!decision) return null;
  const rules = Array.isArray(decision.rules) ? decision.rules.map(obj).filter((x): x is LogRecord => x !== undefined) : [];
  return (
    <div class="decision">
      <h4>
        decision <span class={`badge d-${str(decision.action)}`}>{str(decision.action)}</span>
        {decision.enforced === true ? <span class="muted"> enforced</span> : null}
      </h4>
      {str(decision.effect) ? <p>{str(decision.effect)}</p> : null}
      {rules.length > 0 ? (
        <ul>
          {rules.map((rule, i) => (
            <li key={i}>
              <strong>{str(rule.name)}</strong> {str(rule.action)} {str(rule.reason) ? `— ${str(rule.reason)}` : ""}
              {Array.isArray(rule.findings) ? (
                <ul>
                  {rule.findings.map(obj).map((f, j) => (
                    <li key={j}>
                      {str(f?.type)} <code>{str(f?.path)}</code> {str(f?.detail)}
                    </li>
                  ))}
                </ul>
              ) : null}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

function Http({ http }: { http: LogRecord }) {
  return (
    <div class="http">
      <h4>
        HTTP {str(http.method)} {str(http.path)} → {String(http.status ?? "")}
      </h4>
      <Headers title="request headers" headers={obj(http.requestHeaders)} />
      <Headers title="response headers" headers={obj(http.responseHeaders)} />
    </div>
  );
}

function Headers({ title, headers }: { title: string; headers: LogRecord | undefined }) {
  if (!headers) return null;
  return (
    <details>
      <summary>{title}</summary>
      <table class="headers">
        <tbody>
          {Object.entries(headers).map(([k, v]) => (
            <tr key={k}>
              <th>{k}</th>
              <td>{Array.isArray(v) ? v.map(String).join(", ") : String(v)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </details>
  );
}
