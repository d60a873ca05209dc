// Types of bin/load-cli.mjs (plain JavaScript: bin/ runs before anything is transformed).
export function defaultCacheDir(): string;
export function freshBundle(cacheDir?: string): Promise<{ entry: string; built: boolean }>;
export function loadCli(
  cacheDir?: string,
): Promise<{ main: (argv: string[]) => Promise<number>; how: "bundle" | "bundle-built" | "tsx" }>;
