/**
 * User-facing errors. Each renders as one line; the CLI prints `message` and exits with `exitCode`
 * instead of a stack trace.
 */
export class UserError extends Error {
  readonly exitCode: number;
  constructor(message: string, exitCode = 2) {
    super(message);
    this.name = "UserError";
    this.exitCode = exitCode;
  }
}

/** Raised by a parser on input it cannot read: names the format, the 1-based line and the text. */
export class ParseError extends UserError {
  readonly format: string;
  readonly line: number;
  readonly text: string;
  constructor(format: string, line: number, text: string, reason: string) {
    const shown = text.length > 160 ? `${text.slice(0, 157)}...` : text;
    super(`${format}: line ${line}: ${reason}: ${JSON.stringify(shown)}`);
    this.name = "ParseError";
    this.format = format;
    this.line = line;
    this.text = text;
  }
}
