// Reference authorization server of the conformance harness: node-oidc-provider configured the way the
// tool-server authorization contract asks (HTTPS issuer, PKCE S256, RFC 9207 iss, RFC 8707 resource indicators
// issuing JWT access tokens, refresh tokens, CIMD, DCR, UserInfo with email_verified) plus login and consent
// forms for the test accounts. provider.js is its command line (one server per process, what the product's stacks
// start); host.js serves several in one process for a test suite that starts many stacks (one Provider instance
// each). Everything an instance remembers (store, accounts, mutants, keys, caches) lives in its createProvider()
// call: node-oidc-provider keeps its own state per Provider instance (its Client class, CIMD cache, dynamic
// clients), so two instances in one process share nothing but compiled code.
//
// Mutants (config "mutants", or --mutant NAME) change exactly one behaviour each; see
// conformance/reference/idp/mutants.toml.

import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as https from 'node:https';
import { parseArgs } from 'node:util';

import { compactVerify, createRemoteJWKSet } from 'jose';
import Provider, { errors } from 'oidc-provider';
import MemoryAdapter from 'oidc-provider/lib/adapters/memory_adapter.js';
import LRU from 'oidc-provider/lib/helpers/lru.js';
import als from 'oidc-provider/lib/helpers/als.js';

// How long a fetch of a client's document or JWKS may take: well beyond a loaded machine's scheduling delays, and
// within the read timeouts of the clients waiting on the request that made it (the harness's, the scripted ones').
const FETCH_TIMEOUT_MS = 8000;

const OPTIONS = {
  config: { type: 'string' },
  host: { type: 'string', default: '127.0.0.1' },
  port: { type: 'string' },
  certfile: { type: 'string' },
  keyfile: { type: 'string' },
  'data-dir': { type: 'string' },
  mutant: { type: 'string', multiple: true, default: [] },
  // seconds (e.g. 0.05s) every answer waits, and a new connection's first once more (conformance/reference/_latency.py)
  latency: { type: 'string', default: '0' },
};

/** The command-line arguments of provider.js (also what host.js is given for each instance). */
export function parseProviderArgs(argv) {
  return parseArgs({ args: argv, options: OPTIONS }).values;
}

// ---------------------------------------------------------------------------------------------- helpers (no state)
function constantEquals(a, b) {
  const left = Buffer.from(String(a));
  const right = Buffer.from(String(b));
  return left.length === right.length && crypto.timingSafeEqual(left, right);
}

const SECRET_METHODS = new Set(['client_secret_basic', 'client_secret_post']);

function esc(value) {
  return String(value).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function page(title, body) {
  return `<!DOCTYPE html><html><head><meta charset="utf-8"><title>${esc(title)}</title></head>`
    + `<body><h1>${esc(title)}</h1>${body}</body></html>`;
}

function loginPage(uid, clientId, message) {
  return page('Sign in', `${message ? `<p class="error">${esc(message)}</p>` : ''}`
    + `<p>Signing in to ${esc(clientId)}</p>`
    + `<form id="login" method="post" action="/interaction/${esc(uid)}/login" autocomplete="off">`
    + '<label>Login <input name="login" type="text" autofocus></label>'
    + '<label>Password <input name="password" type="password"></label>'
    + '<button type="submit" name="submit" value="login">Sign in</button></form>'
    + `<form id="cancel" method="post" action="/interaction/${esc(uid)}/abort">`
    + '<button type="submit" name="cancel" value="cancel">Cancel</button></form>');
}

function consentPage(uid, clientId, scopes) {
  return page('Authorize', `<p>${esc(clientId)} asks for: ${esc(scopes.join(' '))}</p>`
    + `<form id="consent" method="post" action="/interaction/${esc(uid)}/confirm">`
    + '<button type="submit" name="decision" value="approve">Allow</button></form>'
    + `<form id="deny" method="post" action="/interaction/${esc(uid)}/abort">`
    + '<button type="submit" name="decision" value="deny">Deny</button></form>');
}

async function readForm(req) {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > 64 * 1024) throw new errors.InvalidRequest('form too large');
    chunks.push(chunk);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

/**
 * The cookie keys given to Koa (node-oidc-provider's `cookies.keys`): the signatures keygrip makes (HMAC-SHA1 of the
 * key's UTF-8 bytes, base64url; the first key signs, any verifies), checked with crypto.timingSafeEqual. Given an
 * array, the cookies package builds a Keygrip for every request, and keygrip's comparison (tsscmp) draws a random
 * key and makes two more HMACs, keyed by a Buffer (Node's slowest key form), for every signed cookie read.
 */
export class CookieKeys {
  #keys;

  constructor(keys) {
    if (!keys.length) throw new Error('cookie keys must be given');
    this.#keys = keys.map((key) => crypto.createSecretKey(Buffer.from(key, 'utf8')));
  }

  sign(data) {
    return CookieKeys.#hmac(data, this.#keys[0]);
  }

  verify(data, digest) {
    return this.index(data, digest) > -1;
  }

  index(data, digest) {
    const given = Buffer.from(String(digest));
    for (let i = 0; i < this.#keys.length; i += 1) {
      const expected = Buffer.from(CookieKeys.#hmac(data, this.#keys[i]));
      if (given.length === expected.length && crypto.timingSafeEqual(given, expected)) return i;
    }
    return -1;
  }

  static #hmac(data, key) {
    return crypto.createHmac('sha1', key).update(data).digest('base64url');
  }
}

function jwtSegment(assertion, index) {
  try {
    return JSON.parse(Buffer.from(assertion.split('.')[index], 'base64url').toString('utf8'));
  } catch {
    return {};
  }
}

/**
 * A configured Provider (not listening): `config` is the parsed --config document, `extraMutants` the --mutant
 * arguments. Each call builds its own store, accounts, keys and mutant state.
 */
export function createProvider(config, extraMutants = []) {
  const mutants = new Set([...(config.mutants ?? []), ...extraMutants]);
  const resources = new Set(config.resources);
  const resourceScope = config.resource_scopes.join(' ');
  const accounts = new Map(config.accounts.map((account) => [account.sub, account]));

  // ---------------------------------------------------------------------------------------------- storage
  // One in-memory store per instance (the default adapter warns about being for development, which this is).
  const store = new LRU({ maxSize: 10000 });

  class ReferenceAdapter extends MemoryAdapter {
    constructor(model) {
      super(model, store);
    }

    async consume(id) {
      // idp-code-reuse: codes are never marked used, so a second exchange succeeds.
      if (mutants.has('idp-code-reuse') && this.model === 'AuthorizationCode') return;
      // idp-code-consume-race: marking a code used is a slow write checked by nobody in the meantime, so two
      // exchanges in flight at once both find it unused (a sequential replay is still refused).
      if (mutants.has('idp-code-consume-race') && this.model === 'AuthorizationCode') {
        await new Promise((resolve) => { setTimeout(resolve, 750); });
      }
      await super.consume(id);
    }

    async find(id) {
      // idp-jti-replay: the replay cache never remembers a client assertion.
      if (mutants.has('idp-jti-replay') && this.model === 'ReplayDetection') return undefined;
      const found = await super.find(id);
      // idp-pkce-unchecked: the code's challenge is taken from the verifier the token request presents, so any
      // code_verifier matches (the PKCE comparison itself is the library's and cannot be configured away).
      const verifier = als.getStore()?.oidc?.params?.code_verifier;
      if (mutants.has('idp-pkce-unchecked') && this.model === 'AuthorizationCode' && found?.codeChallenge && verifier) {
        return { ...found, codeChallenge: crypto.hash('sha256', verifier, 'base64url') };
      }
      // idp-pkce-public-exempt: a token request without client authentication (a public client) has its verifier
      // taken as right: PKCE is checked only on the confidential-client path.
      const store_ = als.getStore();
      const authenticated = Boolean(store_?.oidc?.params?.client_assertion || store_?.oidc?.params?.client_secret
        || store_?.headers?.authorization?.startsWith('Basic '));
      if (mutants.has('idp-pkce-public-exempt') && this.model === 'AuthorizationCode' && found?.codeChallenge
          && verifier && !authenticated) {
        return { ...found, codeChallenge: crypto.hash('sha256', verifier, 'base64url') };
      }
      // idp-pkce-downgrade: a token request without code_verifier skips PKCE (the check runs only "when PKCE is
      // used"), so a stolen code is redeemed by leaving the verifier out.
      const params = als.getStore()?.oidc?.params;
      if (mutants.has('idp-pkce-downgrade') && this.model === 'AuthorizationCode' && found?.codeChallenge && params
          && params.grant_type === 'authorization_code' && !params.code_verifier) {
        return { ...found, codeChallenge: undefined, codeChallengeMethod: undefined };
      }
      return found;
    }
  }

  // ---------------------------------------------------------------------------------------------- accounts
  function findByLogin(login, password) {
    for (const account of accounts.values()) {
      if (account.login === login && constantEquals(account.password, password)) return account;
    }
    return undefined;
  }

  async function findAccount(ctx, sub) {
    const account = accounts.get(sub);
    if (!account) return undefined;
    return {
      accountId: sub,
      async claims() {
        const claims = {
          sub,
          email: account.email,
          // idp-email-unverified: UserInfo says the address is not verified.
          email_verified: !mutants.has('idp-email-unverified'),
          name: account.name,
        };
        if (account.nickname) claims.nickname = account.nickname;
        return claims;
      },
    };
  }

  // ---------------------------------------------------------------------------------------------- CIMD methods
  // The contract: the authorization server accepts every method in the intersection of its list and the client
  // document's token_endpoint_auth_methods_supported (SEP-3149), not only the legacy singular
  // token_endpoint_auth_method, which is all node-oidc-provider reads. A client is resolved afresh for every request
  // (the document is cached, not the Client), so a request that carries no client credentials may switch this
  // request's client to `none` when its document lists it.
  function negotiateCimdMethod(ctx, client) {
    const params = ctx?.oidc?.params;
    if (!params) return;
    const listed = client.tokenEndpointAuthMethodsSupported ?? client.token_endpoint_auth_methods_supported;
    const presented = params.client_assertion !== undefined || params.client_secret !== undefined
      || Boolean(ctx.headers?.authorization?.startsWith('Basic '));
    if (!presented && Array.isArray(listed) && listed.includes('none')) {
      client.tokenEndpointAuthMethod = 'none';
    }
    // idp-cimd-secret-accepted: a client secret is accepted for a CIMD client (which has none to compare).
    // idp-cimd-basic-accepted: the same, only for a secret in an HTTP Basic header (client_secret_basic).
    const basic = Boolean(ctx.headers?.authorization?.startsWith('Basic '));
    const secretAccepted = (mutants.has('idp-cimd-secret-accepted') && params.client_secret !== undefined && !basic)
      || (mutants.has('idp-cimd-basic-accepted') && basic);
    if (secretAccepted && !SECRET_METHODS.has(client.tokenEndpointAuthMethod)) {
      client.tokenEndpointAuthMethod = basic ? 'client_secret_basic' : 'client_secret_post';
      client.compareClientSecret = async () => true;
      client.checkClientSecretExpiration = () => {};
    }
  }

  // ---------------------------------------------------------------------------------------------- provider
  // The key the stack gives (a test suite starting many stacks makes one for all), else a fresh one.
  const privateKey = config.signing_key_file
    ? crypto.createPrivateKey(fs.readFileSync(config.signing_key_file))
    : crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
  const signingKey = { ...privateKey.export({ format: 'jwk' }), kid: crypto.randomUUID(), use: 'sig', alg: 'RS256' };

  const scopes = [...config.scopes];
  if (mutants.has('idp-advertised-scope-refused')) scopes.push('tools.admin');
  const knownScopes = new Set([...scopes, ...config.resource_scopes]);

  // RFC 6749 §4.1.2.1 / §6: a scope the server does not know is refused with invalid_scope (the library would drop it
  // silently), so the error redirect (with iss and state, RFC 9207) is what a host sees. Called wherever the library
  // resolves the request's resource (getResourceServerInfo with one, defaultResource without).
  function refuseUnknownScopes(ctx) {
    const unknown = String(ctx?.oidc?.params?.scope ?? '').split(' ').filter((s) => s && !knownScopes.has(s));
    if (unknown.length) throw new errors.InvalidScope('requested scope is not supported', unknown.join(' '));
  }

  const provider = new Provider(config.issuer, {
    adapter: ReferenceAdapter,
    jwks: { keys: [signingKey] },
    cookies: { keys: new CookieKeys([crypto.randomBytes(32).toString('base64url')]) },
    findAccount,
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name', 'nickname'],
    },
    scopes,
    clientAuthMethods: ['none', 'private_key_jwt', 'client_secret_basic', 'client_secret_post'],
    // Kept on CIMD clients so that every method their document lists can be accepted (negotiateCimdMethod).
    extraClientMetadata: { properties: ['token_endpoint_auth_methods_supported'] },
    // idp-pkce-optional: an authorization request without code_challenge is accepted.
    // idp-pkce-confidential-exempt: PKCE is required of public clients only (the library's own default), so a
    // confidential client's authorization request without code_challenge is accepted.
    pkce: {
      required: (ctx, client) => !mutants.has('idp-pkce-optional')
        && (!mutants.has('idp-pkce-confidential-exempt') || client.clientAuthMethod === 'none'),
    },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      userinfo: { enabled: true },
      revocation: { enabled: true },
      // idp-dcr-instead-of-cimd: CIMD is not supported (nor advertised); DCR is the only way for a host to identify.
      clientIdMetadataDocument: {
        enabled: !mutants.has('idp-dcr-instead-of-cimd'),
        ack: 'draft-02',
        // Documents are re-read soon so that a harness can change its keys between runs.
        cacheDuration: { min: 1, max: 60 },
        // idp-cimd-refused: metadata advertises CIMD, but no document is ever fetched.
        // idp-cimd-stable-only: callback-specific documents (/oauth/{callback_id}/client.json) are refused.
        allowFetch: async (ctx, clientId) => {
          if (mutants.has('idp-cimd-refused')) return false;
          if (mutants.has('idp-cimd-stable-only') && /\/oauth\/[^/]+\/client\.json$/.test(new URL(clientId).pathname)) {
            return false;
          }
          return true;
        },
        // idp-cimd-no-private-key-jwt: a CIMD client that authenticates with private_key_jwt is refused.
        allowClient: async (ctx, client) => {
          if (mutants.has('idp-cimd-no-private-key-jwt') && client.clientAuthMethod === 'private_key_jwt') return false;
          negotiateCimdMethod(ctx, client);
          return true;
        },
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: async (ctx, client, oneOf) => {
          refuseUnknownScopes(ctx);
          return oneOf;
        },
        useGrantedResource: async () => true,
        getResourceServerInfo: async (ctx, indicator) => {
          if (!resources.has(indicator)) throw new errors.InvalidTarget();
          const asked = ctx.oidc.params?.scope?.split(' ') ?? [];
          if (mutants.has('idp-advertised-scope-refused') && asked.includes('tools.admin')) {
            throw new errors.InvalidScope('requested scope is not enabled for this client', 'tools.admin');
          }
          refuseUnknownScopes(ctx);
          return {
            scope: resourceScope,
            accessTokenFormat: 'jwt',
            accessTokenTTL: config.access_token_ttl,
            jwt: { sign: { alg: 'RS256' } },
          };
        },
      },
    },
    ttl: {
      AccessToken: () => config.access_token_ttl,
      AuthorizationCode: 60,
      IdToken: 3600,
      RefreshToken: 24 * 3600,
      Grant: 24 * 3600,
      Session: 24 * 3600,
      Interaction: 3600,
    },
    // Refresh tokens for every client allowed the grant (the host does not always ask offline_access).
    issueRefreshToken: async (ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    // Display fields travel in the JWT access tokens for the tool server, which shows them in its profile tool.
    extraTokenClaims: async (ctx, token) => {
      if (token.kind !== 'AccessToken' || !token.resourceServer || !token.accountId) return undefined;
      const account = accounts.get(token.accountId);
      if (!account) return undefined;
      const extra = { email: account.email, name: account.name };
      if (account.nickname) extra.nickname = account.nickname;
      return extra;
    },
    // Loopback is where the harness publishes its CIMD documents and JWKS: drop the library's SSRF guard
    // (its dispatcher) and rely on NODE_EXTRA_CA_CERTS to trust the stack's local CA. The library aborts a fetch
    // after 2.5 s; the harness answers from its own busy process, and this process may itself wait that long for
    // the CPU on a loaded machine (its abort timer is then due at once, whatever came meanwhile): a valid client
    // refused for the machine's load (invalid_client, "client_id metadata document fetch failed"). FETCH_TIMEOUT_MS
    // instead.
    fetch: (url, options) => {
      const { dispatcher, signal, ...rest } = options;
      return globalThis.fetch(url, { ...rest, signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
    },
    interactions: { url: async (ctx, interaction) => `/interaction/${interaction.uid}` },
    renderError: async (ctx, out) => {
      ctx.type = 'html';
      ctx.body = page('Error', Object.entries(out).map(([k, v]) => `<p><b>${esc(k)}</b>: ${esc(v)}</p>`).join(''));
    },
  });

  // node-oidc-provider caches a CIMD client's document, not the Client: it builds one for every request, validating
  // the same document again each time. The validated metadata is kept per document object (a document fetched again
  // is a new object, validated again); each request still gets a Client of its own (negotiateCimdMethod changes it).
  const validatedDocuments = new WeakMap();
  class DocumentSchema extends provider.Client.Schema {
    constructor(metadata, ctx, processCustomMetadata, cimd) {
      const validated = cimd ? validatedDocuments.get(metadata) : undefined;
      if (validated) return validated; // a constructor may answer with another object: the one made before
      super(metadata, ctx, processCustomMetadata, cimd);
      if (cimd) validatedDocuments.set(metadata, this);
    }
  }
  Object.defineProperty(provider.Client, 'Schema', { value: DocumentSchema });

  if (mutants.has('idp-redirect-prefix')) {
    // A registered redirect URI is treated as a prefix instead of an exact string.
    const exact = provider.Client.prototype.redirectUriAllowed;
    provider.Client.prototype.redirectUriAllowed = function prefixAllowed(value) {
      return exact.call(this, value) || this.redirectUris.some((uri) => String(value).startsWith(uri));
    };
  }

  if (mutants.has('idp-redirect-prefix-confidential')) {
    // The same prefix matching, only for confidential clients (a public client's redirect URI is matched exactly).
    const exact = provider.Client.prototype.redirectUriAllowed;
    provider.Client.prototype.redirectUriAllowed = function confidentialPrefixAllowed(value) {
      return exact.call(this, value)
        || (this.clientAuthMethod !== 'none' && this.redirectUris.some((uri) => String(value).startsWith(uri)));
    };
  }

  if (mutants.has('idp-redirect-case-insensitive')) {
    // Redirect URIs are compared case-insensitively (as if URIs were host names).
    const exact = provider.Client.prototype.redirectUriAllowed;
    provider.Client.prototype.redirectUriAllowed = function caseInsensitiveAllowed(value) {
      const wanted = String(value).toLowerCase();
      return exact.call(this, value) || this.redirectUris.some((uri) => uri.toLowerCase() === wanted);
    };
  }

  // idp-dcr-client-forgotten: a dynamically registered client that obtained a token is deleted when it starts its
  // next authorization (as if its registration expired between two connections).
  const usedClients = new Set();
  if (mutants.has('idp-dcr-client-forgotten')) {
    provider.on('grant.success', (ctx) => {
      const { client } = ctx.oidc;
      if (client && !client.clientIdMetadataDocument) usedClients.add(client.clientId);
    });
  }

  async function forgetUsedClients(ctx) {
    const clientId = ctx.query?.client_id;
    if (ctx.path === '/auth' && typeof clientId === 'string' && usedClients.has(clientId)) {
      usedClients.delete(clientId);
      await new ReferenceAdapter('Client').destroy(clientId);
    }
  }

  // ---------------------------------------------------------------------------------------------- interactions
  // idp-cimd-any-key: a CIMD client assertion whose signature does not verify against the client's JWKS is dropped,
  // so the request falls back to `none` (which the document also lists) and passes: any key is accepted. The other
  // assertion checks (aud, exp, iss/sub, jti) still apply to assertions that do verify.
  // idp-cimd-alg-none: the same fallback for an unsigned assertion (alg "none" in any spelling): it is taken as no
  // assertion at all. idp-assertion-exp-optional: the same for an assertion without exp (checked only when present).
  // idp-assertion-aud-unchecked: the same for an assertion whose aud names neither this issuer nor its token endpoint.
  const remoteKeySets = new Map();

  async function signatureVerifies(clientId, assertion) {
    try {
      const fetched = await globalThis.fetch(clientId, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
      const document = await fetched.json();
      if (!remoteKeySets.has(document.jwks_uri)) {
        // jose's own bound (5 s) would drop a valid assertion on a loaded machine, as the library's would refuse it
        const keys = createRemoteJWKSet(new URL(document.jwks_uri), { timeoutDuration: FETCH_TIMEOUT_MS });
        remoteKeySets.set(document.jwks_uri, keys);
      }
      await compactVerify(assertion, remoteKeySets.get(document.jwks_uri));
      return true;
    } catch {
      return false;
    }
  }

  const assertionDrops = [
    ['idp-cimd-any-key', async (clientId, assertion) => !(await signatureVerifies(clientId, assertion))],
    ['idp-cimd-alg-none', async (clientId, assertion) => String(jwtSegment(assertion, 0).alg).toLowerCase() === 'none'],
    ['idp-assertion-exp-optional', async (clientId, assertion) => jwtSegment(assertion, 1).exp === undefined],
    ['idp-assertion-aud-unchecked', async (clientId, assertion) => {
      const { aud } = jwtSegment(assertion, 1);
      const ours = [config.issuer, `${config.issuer}/token`];
      return !(Array.isArray(aud) ? aud : [aud]).some((value) => ours.includes(value));
    }],
  ].filter(([name]) => mutants.has(name));

  async function dropUnverifiableAssertion(ctx) {
    if (!assertionDrops.length || ctx.method !== 'POST' || ctx.path !== '/token') return;
    const form = await readForm(ctx.req);
    const clientId = form.get('client_id');
    const assertion = form.get('client_assertion');
    if (assertion && clientId?.startsWith('https://')) {
      for (const [, drops] of assertionDrops) {
        if (await drops(clientId, assertion)) {
          form.delete('client_assertion');
          form.delete('client_assertion_type');
          break;
        }
      }
    }
    ctx.request.body = Object.fromEntries(form); // the stream is spent: the library reads a parsed body instead
  }

  async function interactions(ctx, next) {
    if (ctx.path === '/healthz') {
      ctx.body = { status: 'ok' };
      return undefined;
    }
    await dropUnverifiableAssertion(ctx);
    await forgetUsedClients(ctx);
    if (ctx.path === '/.well-known/oauth-authorization-server') {
      // RFC 8414 location of the same metadata (the library serves only the OpenID discovery path).
      ctx.path = '/.well-known/openid-configuration';
      return next();
    }
    const match = /^\/interaction\/([^/]+)(?:\/(login|confirm|abort))?$/.exec(ctx.path);
    if (!match) return next();
    ctx.set('cache-control', 'no-store');
    const [, , action] = match;
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    const { uid, prompt, params } = details;

    if (!action && ctx.method === 'GET') {
      ctx.type = 'html';
      if (prompt.name === 'login') {
        ctx.body = loginPage(uid, params.client_id);
      } else {
        const asked = [...(prompt.details.missingOIDCScope ?? [])];
        for (const scope of Object.values(prompt.details.missingResourceScopes ?? {})) asked.push(...scope);
        ctx.body = consentPage(uid, params.client_id, [...new Set(asked)]);
      }
      return undefined;
    }
    if (ctx.method !== 'POST') return next();

    if (action === 'login') {
      const form = await readForm(ctx.req);
      const account = findByLogin(form.get('login'), form.get('password'));
      if (!account) {
        ctx.type = 'html';
        ctx.body = loginPage(uid, params.client_id, 'Invalid login or password.');
        return undefined;
      }
      await provider.interactionFinished(ctx.req, ctx.res, { login: { accountId: account.sub } },
        { mergeWithLastSubmission: false });
      ctx.respond = false;
      return undefined;
    }

    if (action === 'confirm') {
      await readForm(ctx.req);
      const { accountId } = details.session;
      const grant = details.grantId
        ? await provider.Grant.find(details.grantId)
        : new provider.Grant({ accountId, clientId: params.client_id });
      if (prompt.details.missingOIDCScope) grant.addOIDCScope(prompt.details.missingOIDCScope.join(' '));
      if (prompt.details.missingOIDCClaims) grant.addOIDCClaims(prompt.details.missingOIDCClaims);
      for (const [indicator, scope] of Object.entries(prompt.details.missingResourceScopes ?? {})) {
        grant.addResourceScope(indicator, scope.join(' '));
      }
      const grantId = await grant.save();
      const consent = details.grantId ? {} : { grantId };
      await provider.interactionFinished(ctx.req, ctx.res, { consent }, { mergeWithLastSubmission: true });
      ctx.respond = false;
      return undefined;
    }

    // abort: the user cancelled login or denied consent; the error goes back to the client (with iss).
    await readForm(ctx.req);
    await provider.interactionFinished(ctx.req, ctx.res, {
      error: 'access_denied',
      error_description: 'End-User denied the request',
    }, { mergeWithLastSubmission: false });
    ctx.respond = false;
    return undefined;
  }

  provider.use(interactions);
  return provider;
}

// ---------------------------------------------------------------------------------------------- server
/**
 * `handler` answering each request `latencyMs` later, and the first request of a new connection once more (a
 * remote target's round trip; what conformance/reference/_latency.py does for the Python services); `handler`
 * itself when the latency is 0.
 */
export function withLatency(handler, latencyMs) {
  if (!(latencyMs > 0)) return handler;
  const seen = new WeakSet();
  return (req, res) => {
    const rounds = seen.has(req.socket) ? 1 : 2;
    seen.add(req.socket);
    setTimeout(() => handler(req, res), latencyMs * rounds);
  };
}

/** Milliseconds of a --latency value (seconds, optionally suffixed s or ms). */
export function latencyMs(text) {
  const match = /^\s*(\d+(?:\.\d*)?|\.\d+)\s*(ms|s)?\s*$/i.exec(String(text ?? '0'));
  if (!match) throw new Error(`--latency ${text}: not a duration (e.g. 0.05s or 50ms)`);
  const value = Number(match[1]);
  return (match[2] ?? 's').toLowerCase() === 'ms' ? value : value * 1000;
}

/**
 * One IdP listening: `args` are provider.js's parsed arguments. Resolves once it listens (rejects when it cannot:
 * bad config, port taken) to {provider, server, close()}; close() resolves when the server has closed. `onError`,
 * when given, receives the errors Koa would print to stderr (an instance of host.js logs them to its own file).
 */
export async function startIdp(args, { onError } = {}) {
  const config = JSON.parse(fs.readFileSync(args.config, 'utf8'));
  const provider = createProvider(config, args.mutant ?? []);
  if (onError) provider.on('error', onError); // Koa then no longer prints them
  const server = https.createServer({
    cert: fs.readFileSync(args.certfile),
    key: fs.readFileSync(args.keyfile),
  }, withLatency(provider.callback(), latencyMs(args.latency)));
  // Idle keep-alive connections stay open longer than a host keeps one in its pool (KEEP_ALIVE_S in
  // conformance/reference/_service.py): the host, not the IdP, closes them, and no request meets a closing socket.
  server.keepAliveTimeout = 30_000;
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(Number(args.port), args.host, () => {
      server.off('error', reject);
      if (onError) server.on('error', onError);
      resolve();
    });
  });
  const closed = new Promise((resolve) => { server.once('close', resolve); });
  return {
    config,
    provider,
    server,
    close() {
      server.close();
      server.closeAllConnections();
      return closed;
    },
  };
}
