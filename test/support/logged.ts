import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';

/** A log line as pino writes it. */
export type Line = { level: number; msg: string; [k: string]: unknown };

/** A real pino logger at `level` whose lines are kept, parsed, in `lines`. */
export function logged(level: pino.LevelWithSilent = 'info'): { lines: Line[]; logger: Logger } {
  const lines: Line[] = [];
  const logger = pino(
    { level },
    new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(JSON.parse(chunk.toString()) as Line);
        done();
      },
    }),
  );
  return { lines, logger };
}
