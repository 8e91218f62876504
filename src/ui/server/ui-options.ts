export const DEFAULT_UI_PORT = 8081;

/** The options of `mcp-wiretap ui` (the command itself is defined in src/cli/ui-command.ts). */
export interface UiCommandOptions {
  uiPort: number;
  follow?: boolean;
}
