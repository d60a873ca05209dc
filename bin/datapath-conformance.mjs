#!/usr/bin/env node
// Runs the TypeScript CLI directly (no build step): bin/load-cli.mjs loads cli/main.ts (a bundle of it kept
// fresh in node_modules/.cache, or tsx), then it runs.
import { loadCli } from "./load-cli.mjs";

// a reader that stops early (`… | head`) closes the pipe: that ends the output, not with a stack trace
process.stdout.on("error", (err) => {
  if (err.code === "EPIPE") process.exit(0);
  throw err;
});
const { main } = await loadCli();
process.exitCode = await main(process.argv.slice(2));
