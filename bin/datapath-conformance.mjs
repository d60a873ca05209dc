#!/usr/bin/env node
// Runs the TypeScript CLI directly (no build step): tsx registers the loader, then cli/main.ts runs.
import { register } from "tsx/esm/api";

register();
// a reader that stops early (`… | head`) closes the pipe: that ends the output, not with a stack trace
process.stdout.on("error", (err) => {
  if (err.code === "EPIPE") process.exit(0);
  throw err;
});
const { main } = await import("../cli/main.ts");
process.exitCode = await main(process.argv.slice(2));
