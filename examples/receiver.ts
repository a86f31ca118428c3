/**
 * An example Canvass webhook receiver: verifies each delivery's signature on the raw body and
 * processes each event once, deduplicating on X-Service-Delivery-Id (deliveries are
 * at-least-once; a retry of an event you already took must be acknowledged, not redone).
 *
 *   CANVASS_SIGNING_SECRET=whsec_… TLS_KEY=key.pem TLS_CERT=cert.pem PORT=8443 npx tsx examples/receiver.ts
 *
 * Without TLS_KEY/TLS_CERT it serves plain HTTP (put it behind an HTTPS proxy: Canvass only
 * delivers to https:// URLs). The verifier is the @canvass/verify package (`npm install @canvass/verify`).
 */
import { readFileSync } from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import { verifySignature, WebhookVerificationError } from '@canvass/verify';

const secret = process.env.CANVASS_SIGNING_SECRET;
if (!secret) {
  console.error('set CANVASS_SIGNING_SECRET to the signing secret returned when your first webhook was created');
  process.exit(1);
}

// In production keep this in your database, with a unique constraint, inside the same
// transaction as the work the event causes.
const seen = new Set<string>();

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'POST') {
    res.writeHead(405).end();
    return;
  }
  const raw = await readBody(req);
  try {
    verifySignature({
      secret: secret!,
      header: req.headers['x-service-signature'],
      rawBody: raw,
    });
  } catch (e) {
    const reason = e instanceof WebhookVerificationError ? e.reason : 'error';
    console.warn(`rejected: ${reason}`);
    // 4xx is permanent for Canvass: it will not retry a request we cannot verify.
    res.writeHead(400, { 'content-type': 'text/plain' }).end(reason);
    return;
  }
  const deliveryId = String(req.headers['x-service-delivery-id'] ?? '');
  const attempt = String(req.headers['x-service-attempt'] ?? '');
  if (seen.has(deliveryId)) {
    console.log(`duplicate ${deliveryId} (attempt ${attempt}): already processed, acknowledging`);
    res.writeHead(200).end('duplicate');
    return;
  }
  seen.add(deliveryId);
  const event = JSON.parse(raw.toString('utf8')) as {
    type: string;
    pollId: string;
    participantId: string;
    responses: Record<string, unknown>;
    email: string | null;
  };
  console.log(
    `${deliveryId} attempt ${attempt}: ${event.type} poll=${event.pollId} participant=${event.participantId} answers=${Object.keys(event.responses).length} email=${event.email ?? '-'}`,
  );
  res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
}

const port = Number(process.env.PORT ?? 8443);
const listener = (req: IncomingMessage, res: ServerResponse) =>
  void handle(req, res).catch(() => res.writeHead(500).end());
const server =
  process.env.TLS_KEY && process.env.TLS_CERT
    ? https.createServer({ key: readFileSync(process.env.TLS_KEY), cert: readFileSync(process.env.TLS_CERT) }, listener)
    : http.createServer(listener);
server.listen(port, '127.0.0.1', () => console.log(`receiver listening on ${port}`));
