/** Commands that print data print one JSON object with --json, else readable lines. */
export function print(json: boolean, value: Record<string, unknown>, human: string): void {
  process.stdout.write(json ? JSON.stringify(value) + '\n' : human + '\n');
}

export function fail(json: boolean, message: string, code = 1): never {
  if (json) process.stdout.write(JSON.stringify({ error: message }) + '\n');
  process.stderr.write(`canvass: ${message}\n`);
  process.exit(code);
}

export { describeError } from '../domain/errors.js';
