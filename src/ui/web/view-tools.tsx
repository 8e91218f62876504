import { counted } from "./format.js";
import { setUtc, showsUtc, zoneText } from "./time.js";

/** Local time or UTC, for every time the page shows; remembered by the browser. */
export function ZoneToggle({ onChange }: { onChange: () => void }) {
  return (
    <label class="toggle" title={`times in ${showsUtc() ? "UTC" : `local time (${zoneText()})`}`}>
      <input
        type="checkbox"
        class="utc-toggle"
        checked={showsUtc()}
        onChange={(e) => {
          setUtc((e.currentTarget as HTMLInputElement).checked);
          onChange();
        }}
      />{" "}
      UTC
    </label>
  );
}

/**
 * Links to what the page shows under the filter, put together by the server from the records it holds up
 * to `upto` (where this page stood). A page exported to a file has no server: no links.
 */
export function Downloads({ query, upto, matched }: { query: string; upto: number; matched: number }) {
  if (document.getElementById("wiretap-data")) return null;
  const href = (name: string): string => `/api/download/${name}?${new URLSearchParams({ q: query, upto: String(upto) }).toString()}`;
  return (
    <details class="downloads">
      <summary>download</summary>
      <div class="download-menu">
        <a href={href("records.ndjson")} download data-format="ndjson" title="the records the filter matches, as logged, in order (the list without grouping)">
          NDJSON ({counted(matched, "message")})
        </a>
        <a href={href("capture.har")} download data-format="har" title="their HTTP exchanges as HAR 1.2, as `export --har` writes them">
          HAR
        </a>
        <a href={href("capture.html")} download data-format="html" title="one HTML page with the UI and these records, that opens offline, as `export --html` writes it">
          HTML page
        </a>
      </div>
    </details>
  );
}
