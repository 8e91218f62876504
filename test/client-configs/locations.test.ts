/** Where each client's config is looked for, on Linux, macOS and Windows. */
import { describe, expect, it } from "vitest";
import { clientOfFile, configLocations } from "../../src/client-configs/clients.js";

const files = (platform: NodeJS.Platform, home: string, cwd: string, env: NodeJS.ProcessEnv = {}) =>
  Object.fromEntries(configLocations({ platform, env, home, cwd }).map((l) => [`${l.client} ${l.scope}`, l.file]));

describe("config locations", () => {
  it("Linux", () => {
    expect(files("linux", "/home/me", "/work/app")).toEqual({
      "claude-desktop user": "/home/me/.config/Claude/claude_desktop_config.json",
      "claude-code user": "/home/me/.claude.json",
      "claude-code project": "/work/app/.mcp.json",
      "cursor user": "/home/me/.cursor/mcp.json",
      "cursor project": "/work/app/.cursor/mcp.json",
      "vscode user": "/home/me/.config/Code/User/mcp.json",
      "vscode project": "/work/app/.vscode/mcp.json",
      "windsurf user": "/home/me/.codeium/windsurf/mcp_config.json",
      "codex user": "/home/me/.codex/config.toml",
      "codex project": "/work/app/.codex/config.toml",
      "gemini user": "/home/me/.gemini/settings.json",
      "gemini project": "/work/app/.gemini/settings.json",
    });
    // XDG_CONFIG_HOME, CODEX_HOME and CLAUDE_CONFIG_DIR move what they name.
    const moved = files("linux", "/home/me", "/work/app", { XDG_CONFIG_HOME: "/cfg", CODEX_HOME: "/codex", CLAUDE_CONFIG_DIR: "/claude" });
    expect(moved["claude-desktop user"]).toBe("/cfg/Claude/claude_desktop_config.json");
    expect(moved["vscode user"]).toBe("/cfg/Code/User/mcp.json");
    expect(moved["codex user"]).toBe("/codex/config.toml");
    expect(moved["claude-code user"]).toBe("/claude/.claude.json");
  });

  it("macOS", () => {
    const f = files("darwin", "/Users/me", "/Users/me/app");
    expect(f["claude-desktop user"]).toBe("/Users/me/Library/Application Support/Claude/claude_desktop_config.json");
    expect(f["vscode user"]).toBe("/Users/me/Library/Application Support/Code/User/mcp.json");
    expect(f["cursor user"]).toBe("/Users/me/.cursor/mcp.json");
  });

  it("Windows", () => {
    const f = files("win32", "C:\\Users\\me", "C:\\src\\app", { APPDATA: "C:\\Users\\me\\AppData\\Roaming" });
    expect(f["claude-desktop user"]).toBe("C:\\Users\\me\\AppData\\Roaming\\Claude\\claude_desktop_config.json");
    expect(f["vscode user"]).toBe("C:\\Users\\me\\AppData\\Roaming\\Code\\User\\mcp.json");
    expect(f["windsurf user"]).toBe("C:\\Users\\me\\.codeium\\windsurf\\mcp_config.json");
    expect(f["codex project"]).toBe("C:\\src\\app\\.codex\\config.toml");
  });

  it("run from the home folder, a file that is both the user and the project one is listed once", () => {
    const f = configLocations({ platform: "linux", env: {}, home: "/home/me", cwd: "/home/me" }).map((l) => l.file);
    expect(new Set(f).size).toBe(f.length);
  });

  it("the client is told by a file's name where the name says it", () => {
    expect(clientOfFile("/x/claude_desktop_config.json")).toBe("claude-desktop");
    expect(clientOfFile("/x/.vscode/mcp.json")).toBe("vscode");
    expect(clientOfFile("/x/.cursor/mcp.json")).toBe("cursor");
    expect(clientOfFile("/x/.codex/config.toml")).toBe("codex");
    expect(clientOfFile("/x/mcp.json")).toBeUndefined();
  });
});
