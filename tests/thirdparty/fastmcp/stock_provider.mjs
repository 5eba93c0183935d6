// A stock node-oidc-provider for the FastMCP target: the library's own devInteractions login and consent pages,
// dynamic client registration, resource indicators issuing JWT access tokens, and client ID metadata documents.
// Only documented configuration options; no behaviour of the library is patched. The package is the one the
// reference IdP installs (conformance/reference/idp/node_modules), imported by path.
//
//   node stock_provider.mjs --issuer https://127.0.0.1:PORT --port PORT --certfile C --keyfile K \
//        --resource https://127.0.0.1:N/mcp [--resource ...] --module /path/to/oidc-provider/lib/index.js
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';

const { values: args } = parseArgs({
  options: {
    issuer: { type: 'string' },
    port: { type: 'string' },
    certfile: { type: 'string' },
    keyfile: { type: 'string' },
    resource: { type: 'string', multiple: true },
    module: { type: 'string' },
  },
});

const { default: Provider, errors } = await import(pathToFileURL(args.module).href);
const resources = new Set(args.resource);

const provider = new Provider(args.issuer, {
  scopes: ['openid', 'offline_access', 'mcp:tools'],
  features: {
    registration: { enabled: true },
    clientIdMetadataDocument: { enabled: true, ack: 'draft-02' },
    resourceIndicators: {
      enabled: true,
      defaultResource: async (ctx, client, oneOf) => oneOf,
      getResourceServerInfo: async (ctx, indicator) => {
        if (!resources.has(indicator)) throw new errors.InvalidTarget();
        return { scope: 'mcp:tools', audience: indicator, accessTokenFormat: 'jwt', jwt: { sign: { alg: 'RS256' } } };
      },
    },
  },
  // The documented `fetch` hook: outgoing requests (CIMD documents) go to the harness's publisher on 127.0.0.1,
  // which the library's default special-use-address guard refuses. A deployment fetches public URLs instead.
  fetch: (url, options) => {
    const { dispatcher, ...rest } = options;
    return globalThis.fetch(url, rest);
  },
});

// Mounted at the issuer's path, as the library's docs show for a provider behind an app (express `app.use`):
// the app strips the prefix and keeps the full URL in `originalUrl`.
const prefix = new URL(args.issuer).pathname.replace(/\/$/, '');
const callback = provider.callback();
const app = (req, res) => {
  if (prefix && !(req.url === prefix || req.url.startsWith(`${prefix}/`) || req.url.startsWith(`${prefix}?`))) {
    res.statusCode = 404;
    res.end('not found');
    return;
  }
  req.originalUrl = req.url;
  req.url = req.url.slice(prefix.length) || '/';
  callback(req, res);
};

https
  .createServer({ cert: readFileSync(args.certfile), key: readFileSync(args.keyfile) }, app)
  .listen(Number(args.port), '127.0.0.1', () => console.log(`stock oidc-provider listening on ${args.issuer}`));
