import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * A throwaway CA and a server certificate for loopback (127.0.0.1, ::1, localhost, receiver.test,
 * and *.hosts.test: Node matches no wildcard of a name's last two labels, so not *.test),
 * made with the openssl command line. Endpoints under test serve the leaf; processes trust
 * the CA through NODE_EXTRA_CA_CERTS, exactly as an operator would.
 */
export function makeTestCa(dir: string): { caFile: string; keyFile: string; certFile: string } {
  mkdirSync(dir, { recursive: true });
  const f = (n: string) => path.join(dir, n);
  if (!existsSync(f('server.crt'))) {
    const run = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
    run(
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      f('ca.key'),
      '-out',
      f('ca.crt'),
      '-days',
      '2',
      '-subj',
      '/CN=Canvass Test CA',
    );
    run(
      'req',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      f('server.key'),
      '-out',
      f('server.csr'),
      '-subj',
      '/CN=localhost',
    );
    writeFileSync(
      f('ext.cnf'),
      'subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost,DNS:*.test,DNS:receiver.test,DNS:*.hosts.test\nbasicConstraints=CA:FALSE\n',
    );
    run(
      'x509',
      '-req',
      '-in',
      f('server.csr'),
      '-CA',
      f('ca.crt'),
      '-CAkey',
      f('ca.key'),
      '-CAcreateserial',
      '-out',
      f('server.crt'),
      '-days',
      '2',
      '-extfile',
      f('ext.cnf'),
    );
  }
  return { caFile: f('ca.crt'), keyFile: f('server.key'), certFile: f('server.crt') };
}

export function serverTls(): { key: Buffer; cert: Buffer } {
  const dir = process.env.CANVASS_TEST_TLS_DIR;
  if (!dir)
    throw new Error('CANVASS_TEST_TLS_DIR is not set: run tests through vitest (global setup makes the test CA)');
  return { key: readFileSync(path.join(dir, 'server.key')), cert: readFileSync(path.join(dir, 'server.crt')) };
}
