#!/usr/bin/env node
// `npm test`: Biome, the type check and vitest side by side — tsc (TypeScript 7, the native compiler: 3.5 s of CPU
// where TypeScript 5.9 took 19 s) and Biome (under a second) fill a core while vitest's tests wait on processes,
// timers and Chromium (issue 27: the run in a minute). A lint error still ends the run at once: vitest and tsc are
// stopped and Biome's report printed. Biome's and tsc's reports are printed after vitest's, whole; the exit code
// is the first failure's: Biome's, else tsc's, else vitest's. Arguments go to vitest (`npm test -- --project unit`).
import { spawn } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

const ROOT = join(import.meta.dirname, "..");
const require = createRequire(import.meta.url);
const bin = (pkg, rel) => join(dirname(require.resolve(`${pkg}/package.json`)), rel);

const started = Date.now();
const collect = (child, into) => {
  child.stdout.on("data", (d) => into.push(d));
  child.stderr.on("data", (d) => into.push(d));
};
const biomeOut = [];
const biome = spawn(process.execPath, [bin("@biomejs/biome", "bin/biome"), "check", "."], { cwd: ROOT });
collect(biome, biomeOut);
const biomeDone = new Promise((resolve) => biome.on("close", (code) => resolve(code ?? 1)));

const tscOut = [];
const tsc = spawn(process.execPath, [bin("typescript", "bin/tsc"), "--noEmit"], { cwd: ROOT });
collect(tsc, tscOut);
const tscDone = new Promise((resolve) => tsc.on("close", (code) => resolve({ code, at: Date.now() })));

const vitest = spawn(process.execPath, [bin("vitest", "vitest.mjs"), "run", ...process.argv.slice(2)], {
  cwd: ROOT,
  stdio: "inherit",
});
const forward = (sig) => () => {
  vitest.kill(sig);
  tsc.kill(sig);
  biome.kill(sig);
};
process.on("SIGINT", forward("SIGINT"));
process.on("SIGTERM", forward("SIGTERM"));
const vitestDone = new Promise((resolve) =>
  vitest.on("close", (code, sig) => resolve(code ?? (sig ? 1 : 0))),
);
// a lint error ends the run as it did when Biome ran first: nothing else is waited for
const biomeCode = await biomeDone;
if (biomeCode !== 0) {
  vitest.kill("SIGTERM");
  tsc.kill("SIGTERM");
  await vitestDone;
  process.stdout.write(`\n${Buffer.concat(biomeOut).toString()}`);
  process.exit(biomeCode);
}
const vitestCode = await vitestDone;
process.stdout.write(Buffer.concat(biomeOut).toString());
const t = await tscDone;
const text = Buffer.concat(tscOut).toString();
process.stdout.write(
  t.code === 0
    ? `tsc --noEmit: no type errors (${((t.at - started) / 1000).toFixed(1)} s, beside vitest)\n`
    : `\ntsc --noEmit: exit ${t.code}\n${text}`,
);
process.exit(t.code !== 0 ? (t.code ?? 1) : vitestCode);
