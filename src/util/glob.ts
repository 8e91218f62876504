/**
 * Whole-value, case-insensitive globs: `*` is any run of characters (`/` and `.` included, so `*`
 * matches `tools/call` and `*.example.com` matches `a.b.example.com`), `?` is one character.
 */
export function globToRegExp(glob: string): RegExp {
  let source = "";
  for (const ch of glob) {
    if (ch === "*") source += ".*";
    else if (ch === "?") source += ".";
    else source += ch.replace(/[\\^$.|+()[\]{}]/g, "\\$&");
  }
  return new RegExp(`^${source}$`, "isu");
}
