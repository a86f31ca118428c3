/** Commands that print data print one JSON object with --json, else readable lines. */
export function print(json: boolean, value: Record<string, unknown>, human: string): void {
  process.stdout.write(json ? JSON.stringify(value) + '\n' : human + '\n');
}

export function fail(json: boolean, message: string, code = 1): never {
  if (json) process.stdout.write(JSON.stringify({ error: message }) + '\n');
  process.stderr.write(`canvass: ${message}\n`);
  process.exit(code);
}

/**
 * What went wrong, in words. Some errors carry no message of their own: a connection refused on
 * every address of a name (an AggregateError) says it through the errors it holds.
 */
export function describeError(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  if (e.message) return e.message;
  if (e instanceof AggregateError && e.errors.length) return [...new Set(e.errors.map(describeError))].join('; ');
  const code = (e as { code?: unknown }).code;
  return typeof code === 'string' ? code : e.name;
}
