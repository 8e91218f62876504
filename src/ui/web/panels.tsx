import { bytesText, counted, msText } from "./format.js";
import { CallsOverTime, LatencyChart } from "./tool-charts.js";
import { dateTimeText } from "./time.js";
import { lineDiff } from "../../analysis/line-diff.js";
import { quantile, type Catalog, type Store, type ToolDrift } from "./model.js";
import { legacySessionId } from "../../saved-logs/filters.js";
import { tokenNote, type TokenState } from "./tokens.js";

export function Sessions({ store, onPick }: { store: Store; onPick: (query: string) => void }) {
  const sessions = [...store.sessions.values()];
  if (sessions.length === 0) return <p class="empty">No sessions yet.</p>;
  return (
    <table class="grid sessions">
      <thead>
        <tr>
          <th>server</th>
          <th>session</th>
          <th>client</th>
          <th>server name</th>
          <th>protocol</th>
          <th>transport</th>
          <th>start</th>
          <th>end</th>
          <th class="n">messages</th>
          <th class="n">errors</th>
          <th class="n">denials</th>
          <th class="n">flagged</th>
        </tr>
      </thead>
      <tbody>
        {sessions.map((s) => (
          <tr key={s.key} class="pick" onClick={() => onPick(s.session ? `session:${s.session}` : `server:${s.server}`)}>
            <td>{s.server}</td>
            <td class="mono" title={s.session ?? undefined}>{s.session === null ? "(no session)" : (legacySessionId(s.session) ?? s.session)}</td>
            <td>{s.client ?? ""}</td>
            <td>{s.serverName ?? ""}</td>
            <td>{s.protocolVersion ?? ""}</td>
            <td>{s.transport ?? ""}</td>
            <td class="nowrap">{dateTimeText(s.start)}</td>
            <td class="nowrap">{dateTimeText(s.end)}</td>
            <td class="n">{s.messages}</td>
            <td class="n">{s.errors}</td>
            <td class="n">{s.denials}</td>
            <td class="n">{s.flags}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function ToolStats({ store, onPick, tokens }: { store: Store; onPick: (query: string) => void; tokens: TokenState }) {
  const tools = [...store.tools.values()].sort((a, b) => b.calls - a.calls);
  if (tools.length === 0) return <p class="empty">No tool calls yet.</p>;
  // One time axis for every tool, so that their charts line up.
  let from = Infinity;
  let to = -Infinity;
  for (const t of tools) for (const at of t.times) if (Number.isFinite(at)) [from, to] = [Math.min(from, at), Math.max(to, at)];
  return (
    <table class="grid stats">
      <thead>
        <tr>
          <th>tool</th>
          <th>server</th>
          <th class="n">calls</th>
          <th class="n">errors</th>
          <th class="n">denials</th>
          <th class="n">flagged</th>
          <th class="n">p50</th>
          <th class="n">p95</th>
          <th class="n">p99</th>
          <th class="n" title="request bytes">bytes in</th>
          <th class="n" title="result bytes: what the tool's results cost a model's context">bytes out</th>
          <th class="n" title={`mean tokens of a result (${tokens.report ? tokenNote(tokens.report) : "asked of the server when this tab opens"})`}>tokens ≈</th>
          <th class="n" title="95th percentile of a result's tokens (estimated)">tokens p95</th>
          <th title="calls by latency; the last bar (yellow): calls with none (no answer, cancelled)">latency distribution</th>
          <th title="calls over the capture, one bar per 1/24th of it">calls over time</th>
        </tr>
      </thead>
      <tbody>
        {tools.map((t) => {
          const costs = tokens.report?.byAddress.find((a) => a.address === t.server)?.tools.find((c) => c.tool === t.tool);
          return (
          <tr key={t.key} class="pick" data-tool={t.tool} onClick={() => onPick(`tool:${t.tool}`)}>
            <td class="tool-name">{t.tool}</td>
            <td>{t.server}</td>
            <td class="n calls">{t.calls}</td>
            <td class="n">{t.errors}</td>
            <td class="n">{t.denials}</td>
            <td class="n">{t.flags}</td>
            <td class="n">{msText(quantile(t.latencies, 0.5))}</td>
            <td class="n">{msText(quantile(t.latencies, 0.95))}</td>
            <td class="n">{msText(quantile(t.latencies, 0.99))}</td>
            <td class="n">{bytesText(t.bytesIn)}</td>
            <td class="n">{bytesText(t.bytesOut)}</td>
            <td class="n result-tokens">{costs?.results.mean ?? ""}</td>
            <td class="n result-tokens-p95">{costs?.results.p95 ?? ""}</td>
            <td class="chart">
              <LatencyChart latencies={t.latencies} calls={t.calls} />
            </td>
            <td class="chart">{Number.isFinite(from) ? <CallsOverTime times={t.times} from={from} to={to} /> : null}</td>
          </tr>
          );
        })}
      </tbody>
      <TokenCaption tokens={tokens} />
    </table>
  );
}

/** Under a table with token figures: that they are estimates, with which encoding, or why there are none. */
function TokenCaption({ tokens }: { tokens: TokenState }) {
  const text = tokens.report ? `Tokens ${tokenNote(tokens.report)}.` : tokens.problem ? `No token estimates: ${tokens.problem}` : null;
  return text === null ? null : <caption class="token-note muted">{text}</caption>;
}

export function Catalogs({ store, tokens }: { store: Store; tokens: TokenState }) {
  const catalogs = [...store.catalogs.values()];
  if (catalogs.length === 0) return <p class="empty">No tools/list response yet.</p>;
  return (
    <div class="catalogs">
      {catalogs.map((c) => (
        <CatalogView key={c.server} catalog={c} tokens={tokens} />
      ))}
    </div>
  );
}

function CatalogView({ catalog, tokens }: { catalog: Catalog; tokens: TokenState }) {
  const list = tokens.report?.lists.find((l) => l.addresses.includes(catalog.server));
  return (
    <section class="catalog">
      <h3>
        {catalog.server} <span class="muted">listed {dateTimeText(catalog.listedAt)}</span>
      </h3>
      {list ? (
        <p class="list-tokens" data-total={list.total}>
          tools/list: ≈ {list.total} tokens for {counted(list.tools.length, "tool definition")} <span class="muted">({tokenNote(tokens.report!)})</span>
        </p>
      ) : tokens.problem ? (
        <p class="muted token-note">No token estimates: {tokens.problem}</p>
      ) : null}
      {catalog.truncated ? (
        <p class="warn">
          The last tools/list result is truncated in the log (--payloads): only the names its preview holds are shown ({counted(catalog.tools.size, "name")}), a name
          inside a schema may be among them.
        </p>
      ) : null}
      {catalog.drift.length > 0 ? (
        <div class="drift">
          <h4>Changed definitions</h4>
          {catalog.drift.map((d, i) => (
            <DriftView key={i} drift={d} />
          ))}
        </div>
      ) : null}
      <table class="grid">
        <tbody>
          {[...catalog.tools.entries()].map(([name, def]) => (
            <tr key={name}>
              <td class="tool-name">{name}</td>
              <td class="n def-tokens" title={tokens.report ? `definition tokens (${tokenNote(tokens.report)})` : undefined}>
                {list?.tools.find((t) => t.name === name)?.tokens ?? ""}
              </td>
              <td>
                {appOf(def) ? <span class="badge app" title="this tool has an MCP App">app {appOf(def)}</span> : null} {describe(def)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** The `ui://` resource a tool names as its MCP App (`_meta.ui.resourceUri`), if any. */
function appOf(def: unknown): string | null {
  const meta = def !== null && typeof def === "object" ? (def as { _meta?: unknown })._meta : undefined;
  const ui = meta !== null && typeof meta === "object" ? (meta as { ui?: unknown }).ui : undefined;
  const uri = ui !== null && typeof ui === "object" ? (ui as { resourceUri?: unknown }).resourceUri : undefined;
  return typeof uri === "string" ? uri : null;
}

function DriftView({ drift }: { drift: ToolDrift }) {
  const before = drift.before === undefined ? null : JSON.stringify(drift.before, null, 2);
  const after = drift.after === undefined ? null : JSON.stringify(drift.after, null, 2);
  return (
    <div class="drift-item">
      <p>
        <strong class="tool-name">{drift.tool}</strong> <span class="muted">{dateTimeText(drift.time)}</span> {drift.pinFinding ?? ""}
      </p>
      {before !== null && after !== null ? (
        <pre class="diff">
          {lineDiff(before, after).map((l, i) => (
            <div key={i} class={l.op === "+" ? "add" : l.op === "-" ? "del" : "same"}>
              {l.op} {l.text}
            </div>
          ))}
        </pre>
      ) : (
        <p class="muted">The earlier definition is not in this log (it was pinned before); only the pin check's finding is shown.</p>
      )}
    </div>
  );
}

function describe(def: unknown): string {
  const d = def as { description?: unknown; title?: unknown } | null;
  return typeof d?.description === "string" ? d.description : typeof d?.title === "string" ? d.title : "";
}
