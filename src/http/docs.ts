import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Response, Router } from 'express';
import { nonceSource, type PagePolicy, setPageHeaders } from '../web/page-policy.js';

/**
 * The API reference at /docs: Redoc's standalone bundle (from node_modules, never a CDN) rendering the served
 * /openapi.yaml, so the page and the document cannot disagree.
 */

/** Our one script, found from the package root: the same lookup works from `src/` (tsx) and `dist/src/`. */
function ownAssetsDir(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'package.json'))) return join(dir, 'src', 'http', 'docs-assets');
    dir = dirname(dir);
  }
  throw new Error('docs assets not found: no package.json above the docs module');
}

interface Asset {
  body: Buffer;
  etag: string;
}

function asset(path: string): Asset {
  const body = readFileSync(path);
  return { body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 16)}"` };
}

/**
 * The page's policy: like every page, nothing from other origins, no inline script and no eval. Two grants are
 * particular to the renderer, both scoped to this one page: its styles are created at run time, so `style-src`
 * names this answer's nonce (docs.js stamps it on each <style> the bundle adds), never an unsafe-inline grant; and its
 * search index runs in a worker built from a blob: URL. Redoc's sidebar asks for its logo from the vendor's CDN;
 * `img-src` refuses it (the image then hides itself), so no visitor's address reaches a third party.
 */
export function docsPolicy(nonce: string): PagePolicy {
  const own = nonceSource(nonce);
  return { script: [own], style: [own], img: ["'self'", 'data:'], connect: ["'self'"], worker: ['blob:'], noForms: true };
}

function page(nonce: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference — Multi-network publishing API</title>
<link rel="icon" href="/favicon.ico" type="image/svg+xml">
</head>
<body>
<noscript><p>The reference needs JavaScript. The same content is the OpenAPI document at <a href="/openapi.yaml">/openapi.yaml</a>.</p></noscript>
<div id="reference" data-spec-url="/openapi.yaml"></div>
<script nonce="${nonce}" src="/docs/assets/docs.js"></script>
<script nonce="${nonce}" src="/docs/assets/redoc.standalone.js"></script>
</body>
</html>
`;
}

function send(res: Response, a: Asset, ifNoneMatch: string | undefined): void {
  res.setHeader('ETag', a.etag);
  res.setHeader('Cache-Control', 'no-cache');
  if (ifNoneMatch === a.etag) {
    res.status(304).end();
    return;
  }
  res.type('text/javascript; charset=utf-8').send(a.body);
}

/** GET /docs (the page) and its two scripts under /docs/assets/. */
export function docsRouter(): Router {
  const router = Router();
  const require = createRequire(import.meta.url);
  const assets = new Map<string, Asset>([
    ['redoc.standalone.js', asset(require.resolve('redoc/bundles/redoc.standalone.js'))],
    ['docs.js', asset(join(ownAssetsDir(), 'docs.js'))],
  ]);
  router.get(['/docs', '/docs/'], (_req, res) => {
    const nonce = randomBytes(16).toString('base64');
    setPageHeaders(res, docsPolicy(nonce));
    res.type('html').send(page(nonce));
  });
  router.get('/docs/assets/:file', (req, res, next) => {
    const a = assets.get(req.params.file);
    if (a === undefined) next();
    else send(res, a, req.get('if-none-match'));
  });
  return router;
}
