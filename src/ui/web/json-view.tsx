import { counted } from "./format.js";

/** Collapsible, highlighted JSON. Every value is rendered as text (never as HTML). */
const MAX_CHILDREN = 300;
const MAX_STRING = 20_000;

export function JsonView({ value, open = 4 }: { value: unknown; open?: number }) {
  return (
    <div class="json">
      <Node value={value} depth={0} open={open} />
    </div>
  );
}

function Node({ value, depth, open, label }: { value: unknown; depth: number; open: number; label?: string }) {
  const key = label !== undefined ? <span class="j-key">{JSON.stringify(label)}: </span> : null;
  if (value === null || typeof value !== "object") {
    return (
      <div class="j-line">
        {key}
        <Scalar value={value} />
      </div>
    );
  }
  const isArray = Array.isArray(value);
  const entries: [string | undefined, unknown][] = isArray ? (value as unknown[]).map((v) => [undefined, v]) : Object.entries(value as object);
  const [o, c] = isArray ? ["[", "]"] : ["{", "}"];
  if (entries.length === 0) {
    return (
      <div class="j-line">
        {key}
        <span class="j-punct">{o + c}</span>
      </div>
    );
  }
  const shown = entries.slice(0, MAX_CHILDREN);
  return (
    <details class="j-node" open={depth < open}>
      <summary>
        {key}
        <span class="j-punct">{o}</span>
        <span class="j-count"> {isArray ? counted(entries.length, "item") : counted(entries.length, "key")} </span>
      </summary>
      <div class="j-children">
        {shown.map(([k, v], i) => (
          <Node key={i} value={v} depth={depth + 1} open={open} label={k} />
        ))}
        {entries.length > shown.length ? <div class="j-more">… {entries.length - shown.length} more</div> : null}
      </div>
      <span class="j-punct">{c}</span>
    </details>
  );
}

function Scalar({ value }: { value: unknown }) {
  if (typeof value === "string") {
    const text = value.length > MAX_STRING ? `${value.slice(0, MAX_STRING)}… (${value.length} characters)` : value;
    return <span class="j-str">{JSON.stringify(text)}</span>;
  }
  if (typeof value === "number") return <span class="j-num">{String(value)}</span>;
  if (typeof value === "boolean") return <span class="j-bool">{String(value)}</span>;
  return <span class="j-null">{value === null ? "null" : String(value)}</span>;
}
