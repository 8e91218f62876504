import { useEffect, useRef, useState } from "preact/hooks";
import { legacySessionId, num, obj, str } from "../../saved-logs/filters.js";
import { arrow, bytesOf, bytesText, decisionOf, idText, msText, timeOf } from "./format.js";
import type { Msg } from "./model.js";
import { statusOf } from "./query.js";

export const ROW_HEIGHT = 24;
const OVERSCAN = 10;

interface Props {
  rows: Msg[];
  selected: number;
  onSelect: (row: number, open: boolean) => void;
  /** Keep the last row in view as rows arrive. */
  follow: boolean;
  onUserScroll: (atBottom: boolean) => void;
}

/** Only the rows in view are in the DOM: 100,000 messages scroll like 100. */
export function MessageList({ rows, selected, onSelect, follow, onUserScroll }: Props) {
  const box = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [height, setHeight] = useState(600);
  const programmatic = useRef(false);

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const ro = new ResizeObserver(() => setHeight(el.clientHeight));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);

  useEffect(() => {
    const el = box.current;
    if (el && follow) {
      programmatic.current = true;
      el.scrollTop = el.scrollHeight;
      setScrollTop(el.scrollTop);
    }
  }, [rows.length, follow]);

  useEffect(() => {
    const el = box.current;
    if (!el || selected < 0) return;
    const top = selected * ROW_HEIGHT;
    if (top < el.scrollTop) el.scrollTop = top;
    else if (top + ROW_HEIGHT > el.scrollTop + el.clientHeight) el.scrollTop = top + ROW_HEIGHT - el.clientHeight;
  }, [selected]);

  const first = Math.max(0, Math.floor(scrollTop / ROW_HEIGHT) - OVERSCAN);
  const last = Math.min(rows.length, Math.ceil((scrollTop + height) / ROW_HEIGHT) + OVERSCAN);
  const visible = [];
  for (let i = first; i < last; i++) {
    const m = rows[i] as Msg;
    visible.push(<Row key={m.index} msg={m} top={i * ROW_HEIGHT} selected={i === selected} onClick={() => onSelect(i, true)} />);
  }
  return (
    <div
      class="list"
      ref={box}
      role="grid"
      aria-rowcount={rows.length}
      onScroll={(e) => {
        const el = e.currentTarget as HTMLDivElement;
        setScrollTop(el.scrollTop);
        if (programmatic.current) {
          programmatic.current = false;
          return;
        }
        onUserScroll(el.scrollTop + el.clientHeight >= el.scrollHeight - ROW_HEIGHT);
      }}
    >
      <div class="list-inner" style={{ height: `${rows.length * ROW_HEIGHT}px` }}>
        {visible}
      </div>
    </div>
  );
}

function Row({ msg, top, selected, onClick }: { msg: Msg; top: number; selected: boolean; onClick: () => void }) {
  const r = msg.record;
  const g = msg.group;
  const isRequest = g !== null && g.request === msg;
  const status = statusOf(msg);
  const decision = decisionOf(r);
  const latency = isRequest ? (g.task ? g.task.latencyMs : num(g.answer?.record.latencyMs)) : num(r.latencyMs);
  const tool = str(r.tool) ?? str(obj(r.related)?.tool) ?? "";
  const kind = str(r.kind) ?? "";
  const aside = !isRequest && g !== null;
  return (
    <div
      class={`row${selected ? " selected" : ""}${aside ? " aside" : ""}`}
      style={{ top: `${top}px` }}
      role="row"
      data-index={msg.index}
      data-tool={tool}
      onClick={onClick}
    >
      <span class="c-time">{timeOf(r)}</span>
      <span class="c-dir">{arrow(r)}</span>
      <span class={`c-kind k-${kind}`}>{kind}{str(r.replayOf) ? <span class="replay-mark" title={`replay of ${str(r.replayOf)}`}> ↻</span> : null}</span>
      <span class="c-id">{idText(r.id ?? obj(r.related)?.id)}</span>
      <span class="c-method">{str(r.method) ?? str(r.reason) ?? ""}</span>
      <span class="c-tool">{tool}</span>
      <span class="c-session" title={str(r.session) ?? undefined}>{sessionText(str(r.session))}</span>
      <span class="c-server">{str(r.server) ?? ""}</span>
      <span class="c-status">{status ? <span class={`badge s-${status}`}>{isRequest && g.status === "unanswered" ? "unanswered" : status}</span> : null}</span>
      <span class="c-latency">{msText(latency)}</span>
      <span class="c-size">{bytesText(bytesOf(r))}</span>
      <span class="c-decision">{decision.action && decision.action !== "allow" ? <span class={`badge d-${decision.action}`}>{decision.action}</span> : null}</span>
    </div>
  );
}

/** The start of a session id (a legacy SSE session's `sessionId`, not its endpoint); the whole on hover. */
function sessionText(session: string | null): string {
  if (session === null) return "";
  return (legacySessionId(session) ?? session).slice(0, 8);
}
