import type { PolicyFinding } from "../mcp/decision.js";
import { isPlainObject } from "../util/plain-object.js";
import type { AppContent } from "./app-messages.js";
import { broadEntry, declares, MAX_SCANNED_HTML_CHARS, originsOf, type OriginUse } from "./app-origins.js";

const CSP_LISTS: readonly OriginUse[] = ["connectDomains", "resourceDomains", "frameDomains", "baseUriDomains"];
/** Entries read per list at most; a longer list is itself a finding. */
const MAX_LIST_ENTRIES = 200;

/**
 * What the `apps` detector finds in one app content: an origin its HTML loads from or connects to that its
 * `_meta.ui.csp` does not declare (`app_undeclared_origin`), a CSP entry broader than a list of origins
 * (`app_broad_csp`), each device permission it asks for (`app_permission`), and HTML too large to scan
 * whole (`app_unscanned`).
 */
export function appFindings(app: AppContent): PolicyFinding[] {
  const out: PolicyFinding[] = [];
  const csp = isPlainObject(app.ui?.csp) ? app.ui.csp : {};
  const lists = new Map<OriginUse, string[]>();
  for (const name of CSP_LISTS) {
    const value = csp[name];
    const entries = Array.isArray(value) ? value.filter((e): e is string => typeof e === "string").slice(0, MAX_LIST_ENTRIES) : [];
    lists.set(name, entries);
    if (Array.isArray(value) && value.length > MAX_LIST_ENTRIES) {
      out.push({ type: "app_broad_csp", path: `${app.path}/_meta/ui/csp/${name}`, detail: `app ${quote(app.uri)}: csp.${name} lists ${value.length} entries` });
    }
    entries.forEach((entry, i) => {
      const broad = broadEntry(entry);
      if (broad) out.push({ type: "app_broad_csp", path: `${app.path}/_meta/ui/csp/${name}/${i}`, detail: `app ${quote(app.uri)}: csp.${name} ${broad}` });
    });
  }
  const where = app.path;
  for (const seen of originsOf(app.html)) {
    const declared = lists.get(seen.use) ?? [];
    if (declared.some((entry) => broadEntry(entry) === undefined && declares(entry, seen.origin))) continue;
    if (declared.some((entry) => broadEntry(entry) !== undefined)) continue; // already a broad-csp finding
    out.push({ type: "app_undeclared_origin", path: where, detail: `app ${quote(app.uri)} reaches ${seen.origin} (${seen.how}) but its csp.${seen.use} does not declare it` });
  }
  if (app.html.length > MAX_SCANNED_HTML_CHARS) {
    out.push({ type: "app_unscanned", path: where, detail: `app ${quote(app.uri)}: only the first ${MAX_SCANNED_HTML_CHARS} characters of its HTML were scanned for origins` });
  }
  const permissions = app.ui?.permissions;
  if (isPlainObject(permissions)) {
    for (const name of Object.keys(permissions).slice(0, 50)) {
      out.push({ type: "app_permission", path: `${app.path}/_meta/ui/permissions`, detail: `app ${quote(app.uri)} asks for ${quote(name)}` });
    }
  }
  return out;
}

function quote(s: string): string {
  return JSON.stringify(s.length > 200 ? `${s.slice(0, 200)}…` : s);
}
