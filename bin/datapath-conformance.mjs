#!/usr/bin/env node
// Runs the TypeScript CLI directly (no build step): tsx registers the loader, then cli/main.ts runs.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../cli/main.ts");
process.exitCode = await main(process.argv.slice(2));
