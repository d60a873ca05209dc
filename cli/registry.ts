import type { Io } from "./main.ts";

export interface Command {
  name: string;
  summary: string;
  run(argv: string[], io: Required<Io>): Promise<number>;
}

export const COMMANDS = new Map<string, Command>();

export function registerCommand(c: Command): void {
  COMMANDS.set(c.name, c);
}

export function usage(): string {
  const lines = [...COMMANDS.values()].map((c) => `  ${c.summary}`);
  return `usage: datapath-conformance COMMAND …\n${lines.join("\n")}\n`;
}
