/**
 * Real failures the lab recorded and this repository ships in its bundles, each kept with why: a recorded
 * failure is evidence, never a pass and never an expectation (no declaration changes for it). The replay project
 * reproduces it (its test passes saying "recorded failure reproduced", with a JUnit property), `check` and the
 * upgrade gate still report it as a failure, and helpers/check.test.ts asserts that exactly these fail in the
 * shipped bundles — so a new failure, or one that stops reproducing, is seen.
 *
 * bundle (its folder under suites/bundles/) → property id → why it is kept.
 */
export const RECORDED_FAILURES: Record<string, Record<string, string>> = {};
