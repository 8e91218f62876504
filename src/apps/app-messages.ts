/**
 * MCP Apps (extension `io.modelcontextprotocol/ui`): a tool names its app in `_meta.ui.resourceUri`, a `ui://`
 * resource whose content (`text/html;profile=mcp-app`) a host renders in a sandboxed frame; the content's
 * `_meta.ui` declares the origins the app may reach (`csp`) and the device permissions it asks for. Read
 * here from the messages alone.
 */
import { canonicalJson, sha256Of } from "../util/canonical-json.js";
import { isPlainObject } from "../util/plain-object.js";

export const APP_SCHEME = "ui://";
export const APP_MIME_TYPE = "text/html;profile=mcp-app";
/** Apps named on one record at most (a tools/list of thousands of app tools is summarised by its count). */
const MAX_MARKS = 64;
/** Identifiers on a record are cut to this many characters. */
const MAX_NAME_CHARS = 256;

/** One app content of a `resources/read` result. */
export interface AppContent {
  uri: string;
  /** Where it is in the message: `/result/contents/<i>`. */
  path: string;
  mimeType: string | undefined;
  /** The HTML source (a base64 `blob` decoded as UTF-8). */
  html: string;
  /** `_meta.ui` of the content: what it declares. */
  ui: Record<string, unknown> | undefined;
}

/** What an rpc record says of the apps a message names (`apps`). */
export interface AppMark {
  tool?: string;
  uri: string;
  /** A content read: the sha256 of its pinned form (HTML, MIME type and `_meta.ui`), and its HTML's size. */
  sha256?: string;
  bytes?: number;
}

/** Tools of a tools/list result that carry an app: name and `_meta.ui.resourceUri`. */
export function appToolsOf(result: unknown): { tool: string; uri: string }[] {
  const tools = isPlainObject(result) && Array.isArray(result.tools) ? result.tools : [];
  const out: { tool: string; uri: string }[] = [];
  for (const tool of tools) {
    if (!isPlainObject(tool) || typeof tool.name !== "string" || !isPlainObject(tool._meta)) continue;
    const ui = tool._meta.ui;
    const uri = isPlainObject(ui) ? ui.resourceUri : undefined;
    if (typeof uri === "string") out.push({ tool: tool.name, uri });
  }
  return out;
}

/** The app contents of a `resources/read` result: `ui://` URIs, or the app MIME type. */
export function appContentsOf(result: unknown): AppContent[] {
  const contents = isPlainObject(result) && Array.isArray(result.contents) ? result.contents : [];
  const out: AppContent[] = [];
  contents.forEach((c: unknown, i) => {
    if (!isPlainObject(c) || typeof c.uri !== "string") return;
    const mimeType = typeof c.mimeType === "string" ? c.mimeType : undefined;
    if (!c.uri.toLowerCase().startsWith(APP_SCHEME) && !mimeType?.toLowerCase().startsWith("text/html;profile=mcp-app")) return;
    const html = typeof c.text === "string" ? c.text : typeof c.blob === "string" ? Buffer.from(c.blob, "base64").toString("utf8") : "";
    const ui = isPlainObject(c._meta) && isPlainObject(c._meta.ui) ? c._meta.ui : undefined;
    out.push({ uri: c.uri, path: `/result/contents/${i}`, mimeType, html, ui });
  });
  return out;
}

/** The `params.uri` of a `resources/read` request for an app. */
export function appReadUri(params: unknown): string | undefined {
  const uri = isPlainObject(params) ? params.uri : undefined;
  return typeof uri === "string" && uri.toLowerCase().startsWith(APP_SCHEME) ? uri : undefined;
}

/** What is pinned of an app: its HTML, MIME type and `_meta.ui`, as one digest. */
export function appDigest(app: AppContent): string {
  return sha256Of(canonicalJson({ html: app.html, mimeType: app.mimeType ?? null, ui: app.ui ?? null }));
}

/** One pin of an app read: the URI it is pinned under, where its content is in the answer, its digest. */
export interface AppPin {
  uri: string;
  path: string;
  sha256: string;
}

/**
 * What an answer to an app read pins. A host renders what the answer to its read holds, whatever URI a
 * content names itself: so under the URI the read named, every app content of the answer as one digest (one
 * content naming that URI: the content's own digest). Without the read's URI (an answer tied to no request),
 * each content under its own URI.
 */
export function appPins(apps: readonly AppContent[], readUri: string | undefined): AppPin[] {
  if (readUri === undefined) return apps.map((app) => ({ uri: app.uri, path: app.path, sha256: appDigest(app) }));
  if (apps.length === 0) return [];
  const sole = apps.length === 1 && apps[0]!.uri === readUri;
  const sha256 = sole ? appDigest(apps[0]!) : sha256Of(canonicalJson(apps.map((app) => ({ uri: app.uri, html: app.html, mimeType: app.mimeType ?? null, ui: app.ui ?? null }))));
  return [{ uri: readUri, path: sole ? apps[0]!.path : "/result/contents", sha256 }];
}

/** The name an app is pinned under, beside its server's tools: no tool name has a space (spec: [A-Za-z0-9_.-]). */
export function appPinName(uri: string): string {
  return `app ${uri}`;
}

/** The `apps` member of an rpc record, or undefined when the message names no app. */
export function appMarks(kind: string, method: string | undefined, raw: Record<string, unknown> | undefined): AppMark[] | undefined {
  let marks: AppMark[] = [];
  if (kind === "response" && method === "tools/list") marks = appToolsOf(raw?.result).map(({ tool, uri }) => ({ tool: cut(tool), uri: cut(uri) }));
  else if (kind === "response" && method === "resources/read") {
    marks = appContentsOf(raw?.result).map((app) => ({ uri: cut(app.uri), sha256: safeDigest(app), bytes: Buffer.byteLength(app.html) }));
  } else if (kind === "request" && method === "resources/read") {
    const uri = appReadUri(raw?.params);
    if (uri !== undefined) marks = [{ uri: cut(uri) }];
  }
  return marks.length === 0 ? undefined : marks.slice(0, MAX_MARKS);
}

function safeDigest(app: AppContent): string | undefined {
  try {
    return appDigest(app);
  } catch {
    return undefined;
  }
}

function cut(s: string): string {
  return s.length > MAX_NAME_CHARS ? `${s.slice(0, MAX_NAME_CHARS)}…` : s;
}
