import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply } from 'fastify';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { problem } from '../problem.js';

/** web/dist of the checkout: the same place from src/http/routes (tsx) and dist/http/routes (built). */
export const DASHBOARD_DIST = fileURLToPath(new URL('../../../web/dist/', import.meta.url));

const NOT_BUILT = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Canvass dashboard not built</title></head>
<body><main><h1>The dashboard is not built</h1>
<p>Run <code>npm run build</code> (or <code>npm install</code>, which runs it) in the Canvass checkout, then restart Canvass.</p>
<p>The API is unaffected: see <a href="/docs">/docs</a>.</p></main></body></html>`;

const hide = { schema: { hide: true } };

/**
 * The dashboard holds an API key in its tab: its pages load only its own scripts and styles,
 * talk only to this origin, and are never framed. Inline styles are allowed for the alert
 * emails' HTML, shown in a sandboxed frame that inherits this policy. A window it opens, or
 * one that opens it, from another origin gets no handle on it; nor does it ask for devices.
 */
const PAGE_HEADERS = {
  'cross-origin-opener-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=(), usb=(), display-capture=()',
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

/**
 * The dashboard (web/, a Vite + React app) at /app: its files, and index.html for every other
 * /app/* path so that the app's own routes survive a reload. Public like /docs: the app asks for
 * an API key and sends it to the API itself. Without a build, /app says how to make one
 * (503, a short page; never a 500).
 */
export const dashboardRoutes =
  (root: string = DASHBOARD_DIST): FastifyPluginAsync =>
  async (parent) => {
    await parent.register(async (app) => serve(app, root), { prefix: '/app' });
  };

async function serve(app: FastifyInstance, root: string): Promise<void> {
  app.addHook('onRequest', (_req, reply, done) => {
    reply.headers(PAGE_HEADERS);
    done();
  });
  app.get('/', { ...hide, prefixTrailingSlash: 'no-slash' }, async (_req, reply) => reply.redirect('/app/'));

  const built = () => existsSync(path.join(root, 'index.html'));
  const notBuilt = (reply: FastifyReply) =>
    reply.status(503).type('text/html; charset=utf-8').header('cache-control', 'no-store').send(NOT_BUILT);
  // index.html is checked per request: a rebuild in progress answers "not built", not an error.
  const sendIndex = (reply: FastifyReply) =>
    built() ? reply.header('cache-control', 'no-cache').sendFile('index.html', root) : notBuilt(reply);
  const hasDist = existsSync(root);

  if (hasDist) {
    // Files are looked up per request, so a rebuild needs no restart.
    await app.register(fastifyStatic, {
      root,
      prefix: '/',
      index: false,
      schemaHide: true,
      cacheControl: false,
      // A dot-file a build may write (a manifest) is not served.
      dotfiles: 'ignore',
      setHeaders(res, file) {
        // Hashed bundles never change; everything else is checked on each load.
        res.setHeader(
          'cache-control',
          // Relative to the build, not the checkout: a checkout under a directory named
          // "assets" must not make index.html immutable.
          path.relative(root, file).startsWith(`assets${path.sep}`)
            ? 'public, max-age=31536000, immutable'
            : 'no-cache',
        );
      },
    });
  }

  app.get('/', { ...hide, prefixTrailingSlash: 'slash' }, async (_req, reply) =>
    hasDist ? sendIndex(reply) : notBuilt(reply),
  );
  // A path the file server refuses (a directory, `..`): a missing page, as any other.
  app.setErrorHandler(async (err: { statusCode?: number }, req, reply) => {
    if (err.statusCode === 403)
      return reply
        .status(404)
        .type('application/problem+json')
        .send(problem('not_found', `no route ${req.method} ${req.url.split('?')[0]!}`));
    throw err;
  });
  // Any other /app/* path that is not a file is one of the app's own routes: index.html.
  // A missing file (an old bundle, a typo) stays a 404 problem document.
  app.setNotFoundHandler(async (req, reply) => {
    const p = req.url.split('?')[0]!;
    const last = p.split('/').pop() ?? '';
    if ((req.method === 'GET' || req.method === 'HEAD') && !/\.[A-Za-z0-9]+$/.test(last))
      return hasDist ? sendIndex(reply) : notBuilt(reply);
    return reply
      .status(404)
      .type('application/problem+json')
      .send(problem('not_found', `no route ${req.method} ${p}`));
  });
}
