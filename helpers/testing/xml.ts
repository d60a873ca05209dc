/**
 * A strict XML 1.0 parser for the tests (saxes, a well-kept one that jsdom uses): a file the suite writes as XML
 * (the JUnit report, `summary --svg`) must parse, with no character XML forbids, no unclosed tag, no bad entity.
 */
import { SaxesParser } from "saxes";

/** Parses `xml` whole; throws the first error (its line and column), as a strict reader would stop there. */
export function parseXmlStrictly(xml: string): void {
  const parser = new SaxesParser();
  let first: Error | null = null;
  parser.on("error", (err) => {
    first ??= err;
  });
  try {
    parser.write(xml).close();
  } catch (err) {
    first ??= err as Error;
  }
  if (first) throw first;
}
