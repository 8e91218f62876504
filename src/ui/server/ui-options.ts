export const DEFAULT_UI_PORT = 8081;

/** The options of `mcp-wiretap ui` (the command itself is defined in src/cli/ui-command.ts). */
export interface UiCommandOptions {
  uiPort: number;
  follow?: boolean;
  /** `--allow-replay`, with what a replay's proxy needs (as `replay` takes them). */
  allowReplay?: boolean;
  caDir?: string;
  config?: string;
  upstreamCa?: string[];
  insecureUpstream?: boolean;
}
