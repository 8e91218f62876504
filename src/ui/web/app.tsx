import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { Detail } from "./detail.js";
import { actionKeys, HeldMessages } from "./held.js";
import { MessageList } from "./message-list.js";
import type { Msg, Store } from "./model.js";
import { Catalogs, Sessions, ToolStats } from "./panels.js";
import { compileQuery } from "./query.js";
import type { FeedStatus } from "./feed.js";
import { counted } from "./format.js";
import { Timeline } from "./timeline.js";
import { Downloads, ZoneToggle } from "./view-tools.js";
import { useTokens } from "./tokens.js";

type Tab = "messages" | "timeline" | "sessions" | "tools" | "catalog";

export function App({ store, version, feed }: { store: Store; version: number; feed: FeedStatus }) {
  const [tab, setTab] = useState<Tab>("messages");
  const [query, setQuery] = useState("");
  const [grouped, setGrouped] = useState(true);
  const [paused, setPaused] = useState(false);
  const [follow, setFollow] = useState(true);
  const [selected, setSelected] = useState(-1);
  const [open, setOpen] = useState(false);
  const [shownVersion, setShownVersion] = useState(version);
  const filterBox = useRef<HTMLInputElement>(null);
  const canAct = useMemo(() => actionKeys() !== null, []);
  /** The call opened from the timeline. */
  const [picked, setPicked] = useState<Msg | null>(null);
  const [, setZoneChoice] = useState(0);

  // Paused: the list stays as it is; what arrives meanwhile is counted.
  useEffect(() => {
    if (!paused) setShownVersion(version);
  }, [version, paused]);

  const compiled = useMemo(() => compileQuery(query), [query]);
  const shownCount = useMemo(() => store.msgs.length, [shownVersion]);
  const shownCursor = useMemo(() => feed.cursor, [shownVersion]);
  const tokens = useTokens(tab === "tools" || tab === "catalog", shownCursor);
  /** `matched`: every message the filter matches, grouped or not (what a download holds). */
  const { rows, matched } = useMemo(() => {
    const out: Msg[] = [];
    const msgs = store.msgs;
    let matched = 0;
    for (let i = 0; i < shownCount; i++) {
      const m = msgs[i] as Msg;
      if (!compiled.test(m)) continue;
      matched++;
      if (!grouped || m.group === null || m.group.request === m) out.push(m);
    }
    return { rows: out, matched };
  }, [shownCount, compiled, grouped, shownVersion]);

  const selectedMsg = selected >= 0 ? rows[selected] : undefined;
  const waiting = store.msgs.length - shownCount;

  useEffect(() => {
    const onKey = (e: KeyboardEvent): void => {
      const typing = e.target instanceof HTMLInputElement || e.target instanceof HTMLTextAreaElement;
      if (e.key === "Escape") {
        if (typing) (e.target as HTMLElement).blur();
        else setOpen(false);
        return;
      }
      if (typing || e.ctrlKey || e.metaKey || e.altKey) return;
      if (e.key === "/") {
        e.preventDefault();
        setTab("messages");
        filterBox.current?.focus();
      } else if (e.key === "j" || e.key === "ArrowDown") {
        e.preventDefault();
        setFollow(false);
        setSelected((s) => Math.min(rows.length - 1, s + 1));
      } else if (e.key === "k" || e.key === "ArrowUp") {
        e.preventDefault();
        setFollow(false);
        setSelected((s) => Math.max(0, s - 1));
      } else if (e.key === "Enter") {
        setOpen((o) => !o);
      } else if (e.key === " " && feed.live) {
        e.preventDefault();
        setPaused((p) => !p);
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [rows.length, feed.live]);

  const pick = (q: string): void => {
    setQuery(q);
    setTab("messages");
    setSelected(-1);
  };

  return (
    <div class="app">
      <header class="top">
        <span class="brand">mcp-wiretap</span>
        <nav>
          {(["messages", "timeline", "sessions", "tools", "catalog"] as Tab[]).map((t) => (
            <button type="button" key={t} class={tab === t ? "tab active" : "tab"} onClick={() => setTab(t)}>
              {t === "tools" ? "tool stats" : t}
            </button>
          ))}
        </nav>
        <input
          ref={filterBox}
          type="search"
          class="filter"
          placeholder="filter: tool:echo status:error server:… session:… method:… decision:deny dir:client text   ( / )"
          value={query}
          onInput={(e) => {
            setQuery((e.currentTarget as HTMLInputElement).value);
            setSelected(-1);
          }}
          aria-label="filter"
        />
        <label class="toggle">
          <input type="checkbox" checked={grouped} onChange={(e) => setGrouped((e.currentTarget as HTMLInputElement).checked)} /> group exchanges
        </label>
        <ZoneToggle onChange={() => setZoneChoice((n) => n + 1)} />
        <Downloads query={query} upto={shownCursor} matched={matched} />
        {feed.live ? (
          <button type="button" class={paused ? "pause paused" : "pause"} onClick={() => setPaused(!paused)} title="pause (space)">
            {paused ? `resume${waiting > 0 ? ` (${waiting} new)` : ""}` : "pause"}
          </button>
        ) : null}
      </header>
      {compiled.problems.length > 0 ? <div class="warn">Not understood: {compiled.problems.join(", ")}</div> : null}
      {canAct ? <HeldMessages /> : null}
      <main class={(open && selectedMsg && tab === "messages") || (picked && tab === "timeline") ? "body with-detail" : "body"}>
        {tab === "messages" ? (
          <>
            <div class="messages">
              <div class="row head" role="row">
                <span class="c-time">time</span>
                <span class="c-dir" />
                <span class="c-kind">kind</span>
                <span class="c-id">id</span>
                <span class="c-method">method</span>
                <span class="c-tool">tool</span>
                <span class="c-session">session</span>
                <span class="c-server">server</span>
                <span class="c-status">status</span>
                <span class="c-latency">latency</span>
                <span class="c-size">size</span>
                <span class="c-decision">decision</span>
              </div>
              <MessageList
                rows={rows}
                selected={selected}
                follow={follow && !paused}
                onSelect={(i, o) => {
                  setSelected(i);
                  setFollow(false);
                  if (o) setOpen(true);
                }}
                onUserScroll={(atBottom) => setFollow(atBottom)}
              />
            </div>
            {open && selectedMsg ? <Detail msg={selectedMsg} store={store} onClose={() => setOpen(false)} /> : null}
          </>
        ) : tab === "timeline" ? (
          <>
            <Timeline rows={rows} onOpen={setPicked} opened={picked} />
            {picked ? <Detail msg={picked} store={store} onClose={() => setPicked(null)} /> : null}
          </>
        ) : tab === "sessions" ? (
          <Sessions store={store} onPick={pick} />
        ) : tab === "tools" ? (
          <ToolStats store={store} onPick={pick} tokens={tokens} />
        ) : (
          <Catalogs store={store} tokens={tokens} />
        )}
      </main>
      <footer class="status">
        <span class="count">
          {rows.length} shown · {counted(store.msgs.length, "message")} · {counted(store.records, "record")}
        </span>
        <span>{feed.source}</span>
        {feed.live ? <span class={feed.connected ? "ok" : "warn"}>{feed.connected ? (paused ? "paused" : follow ? "following" : "live") : "disconnected"}</span> : null}
        {feed.live && feed.ratePerSecond > 0 ? (
          <span class="rate">
            {feed.ratePerSecond} records/s, drawn in {feed.framesPerSecond} updates/s ({Math.max(0, feed.ratePerSecond - feed.framesPerSecond)} coalesced)
          </span>
        ) : null}
        {store.skipped > 0 ? <span class="warn">{counted(store.skipped, "record")} missed (the page fell behind)</span> : null}
        {store.notRecords > 0 ? <span class="warn">{store.notRecords === 1 ? "1 line not a record" : `${store.notRecords} lines not records`}</span> : null}
      </footer>
    </div>
  );
}
