/**
 * `mcp-wiretap stdio …` on its own: the program with that one command, so a launch a client starts loads
 * none of the other commands' code (main.ts picks it by the first argument; help and errors are the same).
 */
import { bareProgram } from "./bare-program.js";
import { runProgram } from "./run-program.js";
import { registerStdioCommand } from "./stdio-command.js";

export async function main(argv: string[]): Promise<void> {
  const program = bareProgram();
  registerStdioCommand(program);
  await runProgram(program, argv);
}
