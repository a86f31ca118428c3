// Builds dist/esm (ES modules, as the package's "type" says) and dist/cjs (CommonJS, marked so by
// its own package.json), each with its type declarations.
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const run = (project) => execFileSync(process.execPath, [tsc, '-p', project], { cwd: root, stdio: 'inherit' });

rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
run('tsconfig.json');
run('tsconfig.cjs.json');
writeFileSync(new URL('../dist/cjs/package.json', import.meta.url), '{ "type": "commonjs" }\n');
