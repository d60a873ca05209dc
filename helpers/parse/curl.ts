import { ParseError, UserError } from "../errors.ts";
import { checkText, mayBeCut } from "./lines.ts";

/** The `-w` format `parseCurl` reads. */
export const CURL_WRITE_OUT = "http_code=%{http_code} time_total=%{time_total}";

/**
 * The probe command every check uses: silent but for errors, `-v` so the connect() errno is printed, the
 * body discarded, a hard time limit, and the write-out `parseCurl` reads.
 */
export function curlArgv(url: string, opts: { maxTime?: number; verbose?: boolean } = {}): string[] {
  return [
    "curl",
    "-sS",
    ...(opts.verbose === false ? [] : ["-v"]),
    "-o",
    "/dev/null",
    "--max-time",
    String(opts.maxTime ?? 5),
    "-w",
    CURL_WRITE_OUT,
    url,
  ];
}

/**
 * The probe that keeps the body (issue 34: which backend answered, the address it saw): as `curlArgv`, but the
 * body goes to stdout and the write-out follows it on a line of its own. `parseCurl` reads the write-out line;
 * `curlBodyLine` the body's.
 */
export function curlBodyArgv(url: string, maxTime = 5): string[] {
  return ["curl", "-sS", "-v", "--max-time", String(maxTime), "-w", `\\n${CURL_WRITE_OUT}`, url];
}

/**
 * The body's last non-blank line before the write-out line (1-based, in stdout), or its first line matching `pick`,
 * and its text trimmed; null when there is no such line or no write-out line (the request got no answer).
 */
export function curlBodyLine(stdout: string, pick?: RegExp): { line: number; text: string } | null {
  const lines = stdout.split("\n");
  const wo = lines.findIndex((l) => /^\s*http_code=/.test(l));
  if (wo < 0) return null;
  if (pick) {
    const i = lines.slice(0, wo).findIndex((l) => pick.test(l));
    return i < 0 ? null : { line: i + 1, text: (lines[i] as string).trim() };
  }
  for (let i = wo - 1; i >= 0; i--) {
    const t = (lines[i] as string).trim();
    if (t !== "") return { line: i + 1, text: t };
  }
  return null;
}

export type CurlClass =
  | "REFUSED"
  | "TIMEOUT"
  | "UNREACHABLE"
  /** connect() returned EPERM (Cilium 1.19.2–1.19.3's socket hook for a Service without backends, issue 45184). */
  | "EPERM"
  | "CONNECT_FAILED"
  | "DNS"
  | "HTTP"
  | "OTHER";

export interface CurlResult {
  exitCode: number;
  /** How the exit code was learned: the process status, or `curl: (N)` recovered from stderr. */
  exitCodeSource: "status" | "stderr" | "write-out";
  class: CurlClass;
  /** `HTTP 200`, `REFUSED`, … — the class with the status code for HTTP. */
  verdict: string;
  httpCode: number | null;
  timeTotal: number | null;
  /** The `curl: (N) …` line, when there is one. */
  error: string | null;
  /** The connect() errno curl -v reported (`* connect to … failed: Connection refused`), when it did. */
  errno: "ECONNREFUSED" | "EHOSTUNREACH" | "ENETUNREACH" | "EPERM" | null;
  /**
   * Where the lines that decided it are (1-based, in the stream named): the `-w` write-out, the `curl: (N)`
   * line, and the line that named the errno. Evidence quotes them at their place.
   */
  at: { writeOut: CurlLine | null; error: CurlLine | null; errno: CurlLine | null };
}

export interface CurlLine {
  stream: "stdout" | "stderr";
  line: number;
}

export interface CurlInput {
  /** The exit status as the exec layer saw it; null when it was lost (e.g. exec through the apiserver). */
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The connect() errno in curl's text: `* connect to A port P failed: Connection refused` (curl -v ≥ 7.8x on a
 * non-blocking connect that fails later), `* Immediate connect fail for A: No route to host` (connect() itself
 * failed: how curl 7.88 reports the socket hook's answer, recorded on the lab cluster), or the error line itself
 * when curl puts the errno's words there: `curl: (7) Failed to connect to A port P after 0 ms: Connection refused`
 * (without `after N ms` in older curl). `Couldn't connect to server` there names no errno.
 */
const VIA = String.raw`(?:failed|Immediate connect fail for \S+|Failed to connect to \S+ port \d+(?: after \d+ ms)?):`;
const ERRNO: [RegExp, CurlResult["errno"]][] = [
  [new RegExp(`${VIA} Connection refused`, "i"), "ECONNREFUSED"],
  [new RegExp(`${VIA} (?:No route to host|Host is unreachable)`, "i"), "EHOSTUNREACH"],
  [new RegExp(`${VIA} Network is unreachable`, "i"), "ENETUNREACH"],
  [new RegExp(`${VIA} Operation not permitted`, "i"), "EPERM"],
];

/**
 * Classifies a curl run made with `-v -w 'http_code=%{http_code} time_total=%{time_total}'` (bare
 * `%{http_code} %{time_total}` is accepted too). Exit 7 is REFUSED or UNREACHABLE by the errno that
 * `-v` printed (curl's own message says "Couldn't connect to server" for both), CONNECT_FAILED when
 * there is no errno line; 28 is TIMEOUT; 6 is DNS.
 */
export function parseCurl(input: CurlInput): CurlResult {
  checkStreams(input);
  const text = `${input.stdout}\n${input.stderr}`;
  const errLine = /^.*curl: \((\d+)\).*$/m.exec(input.stderr) ?? /^.*curl: \((\d+)\).*$/m.exec(input.stdout);
  const wo = /exitcode=(\d+)/.exec(input.stdout);
  let exitCode = input.exitCode;
  let source: CurlResult["exitCodeSource"] = "status";
  if (exitCode === null && wo) {
    exitCode = Number(wo[1]);
    source = "write-out";
  }
  if (exitCode === null && errLine) {
    exitCode = Number(errLine[1]);
    source = "stderr";
  }
  let httpCode: number | null = null;
  let timeTotal: number | null = null;
  const hc = /http_code=(\d{3})/.exec(input.stdout);
  const tt = /time_total=([\d.]+)/.exec(input.stdout);
  if (hc) httpCode = Number(hc[1]);
  if (tt) timeTotal = Number(tt[1]);
  if (!hc && !tt) {
    const bare = /(?:^|\s)(\d{3})\s+(\d+\.\d+)\s*$/.exec(input.stdout.trim());
    if (bare) {
      httpCode = Number(bare[1]);
      timeTotal = Number(bare[2]);
    }
  }
  if (exitCode === null) {
    if (httpCode !== null && httpCode > 0) exitCode = 0;
    else throw new UserError("curl: no exit status, no `curl: (N)` line and no HTTP code in the output");
  }
  if (httpCode === 0) httpCode = null;
  const errno = ERRNO.find(([re]) => re.test(text))?.[1] ?? null;
  const where = (re: RegExp, streams: CurlLine["stream"][]): CurlLine | null => {
    for (const stream of streams) {
      const i = input[stream].split("\n").findIndex((l) => re.test(l));
      if (i >= 0) return { stream, line: i + 1 };
    }
    return null;
  };
  const errnoRe = ERRNO.find(([, e]) => e === errno)?.[0];
  let cls: CurlClass;
  if (exitCode === 0 || (exitCode === 22 && httpCode !== null)) cls = "HTTP";
  else if (exitCode === 7)
    cls =
      errno === "ECONNREFUSED"
        ? "REFUSED"
        : errno === "EPERM"
          ? "EPERM"
          : errno
            ? "UNREACHABLE"
            : "CONNECT_FAILED";
  else if (exitCode === 28) cls = "TIMEOUT";
  else if (exitCode === 6) cls = "DNS";
  else cls = "OTHER";
  const verdict = cls === "HTTP" ? `HTTP ${httpCode ?? "?"}` : cls === "OTHER" ? `OTHER ${exitCode}` : cls;
  return {
    exitCode,
    exitCodeSource: source,
    class: cls,
    verdict,
    httpCode,
    timeTotal,
    error: errLine ? (errLine[0] as string).trim() : null,
    errno,
    at: {
      writeOut: where(/http_code=|time_total=|^\s*\d{3}\s+\d+\.\d+\s*$/, ["stdout"]),
      error: where(/curl: \(\d+\)/, ["stderr", "stdout"]),
      errno: errnoRe ? where(errnoRe, ["stderr", "stdout"]) : null,
    },
  };
}

const FORMAT = "curl";
/**
 * `%{time_total}` as curl prints it (seconds, six decimals), and followed by a literal unit a `-w` format may put
 * after it (`time_total=%{time_total}s`: `time_total=0.000884s`). Another unit (`ms`) would misread the seconds.
 */
const TIME = /^\d+\.\d+(?:s|sec|secs)?$/;

/**
 * Binary data in either stream is an error naming its line; so is a write-out that is not whole. Ours prints
 * `http_code=NNN time_total=S.UUUUUU` at the very end of stdout (no newline; curl prints the time with six
 * decimals): a code that is not three digits, or a code without its time, is cut off; a time with fewer decimals
 * at the end of the output may be, and is a warning.
 */
function checkStreams(input: CurlInput): void {
  for (const stream of ["stdout", "stderr"] as const) {
    const lines = input[stream].split("\n");
    lines.forEach((l, i) => {
      const text = l.trimEnd();
      checkText(FORMAT, text, i + 1);
      if (stream !== "stdout" || !/http_code=|time_total=/.test(text)) return;
      // ours starts its line: text before it is another line joined to it (`exit=0http_code=200 …`)
      if (!/^\s*http_code=/.test(text))
        throw new ParseError(
          FORMAT,
          i + 1,
          text,
          "the write-out does not start its line (another line joined to it?)",
        );
      const hc = /http_code=(\S*)/.exec(text);
      const tt = /time_total=(\S*)/.exec(text);
      if (!hc || !/^\d{3}$/.test(hc[1] as string) || !tt || !TIME.test(tt[1] as string))
        throw new ParseError(
          FORMAT,
          i + 1,
          text,
          "the write-out is not `http_code=NNN time_total=S.UUUUUU` (cut off?)",
        );
      // a unit after the number ends it: only a bare number with fewer decimals than curl prints may be cut
      if (i === lines.length - 1 && !/^\d+\.\d{6}$/.test(tt[1] as string) && !/[a-z]$/.test(tt[1] as string))
        mayBeCut({ no: i + 1, text, unterminated: true });
    });
  }
}

/** CLI text form: optional `exit=N` line, then curl's stdout and stderr as captured together. */
export function parseCurlText(input: string, exitCode: number | null): CurlResult {
  const m = /^exit=(\d+)\s*$/m.exec(input);
  // `exit=12` may be the start of `exit=124` when nothing follows it
  if (m && m.index + m[0].length === input.length && !m[0].endsWith("\n")) {
    const no = input.slice(0, m.index).split("\n").length;
    mayBeCut({ no, text: m[0], unterminated: true });
  }
  const code = exitCode ?? (m ? Number(m[1]) : null);
  const body = input.replace(/^exit=\d+\s*$/m, "");
  return parseCurl({ exitCode: code, stdout: body, stderr: body });
}
