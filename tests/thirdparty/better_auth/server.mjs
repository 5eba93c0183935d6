// A tool server behind better-auth, as a vendor would write it from better-auth's documentation: one Node app on
// one origin (https://127.0.0.1:PORT) serving
//   - better-auth (basePath /api/auth) with the JWT plugin and @better-auth/mcp's mcp() (the OAuth 2.1 provider of
//     @better-auth/oauth-provider bound to the MCP resource, serving RFC 9728 metadata), open dynamic client
//     registration enabled, email and password sign-in, a database in node:sqlite memory migrated at start;
//   - the sign-in page (/sign-in) and the consent page (/consent) better-auth redirects to: server-rendered forms
//     whose POST calls better-auth's sign-in/email and oauth2/consent endpoints with the signed authorization query
//     (oauth_query), as a server-side form action does (oauthProviderClient() does the same from the browser);
//   - the RFC 8414 document at /.well-known/oauth-authorization-server/api/auth (oauthProviderAuthServerMetadata);
//   - the MCP endpoint /mcp: the MCP TypeScript SDK (McpServer over the web-standard streamable HTTP transport,
//     stateless) behind requireMcpAuth (JWT verified against better-auth's JWKS: issuer, audience, expiry).
// Settings from the environment: PORT, CERT_FILE, KEY_FILE, VENDOR_USER, VENDOR_PASSWORD.
// Not a conformance reference: nothing here tries to pass the harness; it is what the libraries make easy.

import { readFileSync } from "node:fs";
import { createServer } from "node:https";
import { randomBytes } from "node:crypto";
import { DatabaseSync } from "node:sqlite";

import { mcp, requireMcpAuth } from "@better-auth/mcp";
import { oauthProviderAuthServerMetadata, oauthProviderOpenIdConfigMetadata } from "@better-auth/oauth-provider";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { betterAuth } from "better-auth";
import { getMigrations } from "better-auth/db/migration";
import { toNodeHandler } from "better-auth/node";
import { jwt } from "better-auth/plugins";
import { getRequest, setResponse } from "better-call/node";
import { z } from "zod";

const port = Number(process.env.PORT);
const origin = `https://127.0.0.1:${port}`;
const resource = `${origin}/mcp`;

const options = {
  baseURL: origin,
  secret: randomBytes(32).toString("hex"),
  database: new DatabaseSync(":memory:"),
  emailAndPassword: { enabled: true },
  disabledPaths: ["/token"],
  plugins: [
    jwt(),
    mcp({
      loginPage: "/sign-in",
      consentPage: "/consent",
      resource,
      allowDynamicClientRegistration: true,
      allowUnauthenticatedClientRegistration: true,
    }),
  ],
};
const auth = betterAuth(options);
const { runMigrations } = await getMigrations(options);
await runMigrations();
await auth.api.signUpEmail({
  body: { email: process.env.VENDOR_USER, password: process.env.VENDOR_PASSWORD, name: "Vendor Tester" },
});

const escape = (text) => String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const page = (title, body, status = 200) =>
  new Response(
    `<!DOCTYPE html><html><head><meta charset="utf-8"><title>${title}</title></head><body><h1>${title}</h1>${body}` +
      "</body></html>",
    { status, headers: { "content-type": "text/html; charset=utf-8" } },
  );

// Server-rendered pages, as a server-side framework (a form action calling auth.api) builds them: the page carries
// better-auth's signed authorization query (oauth_query) in a hidden field; the form's POST calls better-auth's API
// with the browser's headers and answers with better-auth's cookies and a redirect to where it continues.
const signInPage = (query, error = "") =>
  page(
    "Sign in to Vendor Tools",
    `${error ? `<p class="error">${escape(error)}</p>` : ""}<form method="post" action="/sign-in">
<input type="hidden" name="oauth_query" value="${escape(query)}"><label>Email <input name="email" type="email"></label>
<label>Password <input name="password" type="password"></label><button type="submit">Sign in</button></form>`,
    error ? 401 : 200,
  );

const consentPage = (query) => {
  const params = new URLSearchParams(query);
  return page(
    "Allow access?",
    `<p>${escape(params.get("client_id") || "An application")} asks for: ${escape(params.get("scope") || "")}</p>
<form method="post" action="/consent"><input type="hidden" name="oauth_query" value="${escape(query)}">
<button type="submit" name="accept" value="yes">Allow</button><button type="submit" name="accept" value="no">Deny</button>
</form>`,
  );
};

// Calls a better-auth endpoint for the browser (its cookies and origin, a JSON body as better-auth's client sends)
// and turns its answer (a redirect, or JSON naming {url} or {redirect_uri}) into a redirect that sets its cookies.
async function continueWith(path, body, request, onError) {
  const headers = new Headers(request.headers);
  headers.set("content-type", "application/json");
  headers.delete("content-length");
  const call = new Request(`${origin}/api/auth${path}`, { method: "POST", headers, body: JSON.stringify(body) });
  const answer = await auth.handler(call);
  const data = await answer.json().catch(() => ({}));
  const next = answer.headers.get("location") || data.url || data.redirect_uri;
  if (answer.status >= 400 || !next) {
    console.error(`${path}: ${answer.status} ${JSON.stringify(data)}`);
    return onError(data.message || data.error_description || "Something went wrong");
  }
  const redirect = new Headers({ location: next });
  for (const cookie of answer.headers.getSetCookie()) redirect.append("set-cookie", cookie);
  return new Response(null, { status: 302, headers: redirect });
}

async function signIn(request) {
  const form = await request.formData();
  const body = { email: form.get("email"), password: form.get("password"), oauth_query: form.get("oauth_query") };
  return continueWith("/sign-in/email", body, request, (error) =>
    signInPage(form.get("oauth_query"), error),
  );
}

async function consent(request) {
  const form = await request.formData();
  const body = { accept: form.get("accept") === "yes", oauth_query: form.get("oauth_query") };
  return continueWith("/oauth2/consent", body, request, (error) =>
    page("Authorization error", `<p>${escape(error)}</p>`, 400),
  );
}

const tools = () => {
  const server = new McpServer({ name: "vendor-tools", version: "1.0.0" });
  const readOnly = { readOnlyHint: true, destructiveHint: false, openWorldHint: false };
  server.registerTool(
    "echo",
    { description: "Repeat the text back.", inputSchema: { text: z.string() }, annotations: readOnly },
    async ({ text }) => ({ content: [{ type: "text", text }] }),
  );
  server.registerTool(
    "add",
    { description: "Add two integers.", inputSchema: { a: z.number().int(), b: z.number().int() }, annotations: readOnly },
    async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }),
  );
  return server;
};

const mcpEndpoint = requireMcpAuth(
  auth,
  async (request) => {
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await tools().connect(transport);
    return transport.handleRequest(request);
  },
  { resource },
);

const authHandler = toNodeHandler(auth);
const asMetadata = oauthProviderAuthServerMetadata(auth);
const oidcMetadata = oauthProviderOpenIdConfigMetadata(auth);

async function fetchLike(req, res, handler) {
  const request = await getRequest({ request: req, base: origin });
  await setResponse(res, await handler(request));
}

const server = createServer(
  { cert: readFileSync(process.env.CERT_FILE), key: readFileSync(process.env.KEY_FILE) },
  async (req, res) => {
    try {
      const url = new URL(req.url, origin);
      if (url.pathname === "/mcp") return await fetchLike(req, res, mcpEndpoint);
      if (url.pathname === "/.well-known/oauth-authorization-server/api/auth") return await fetchLike(req, res, asMetadata);
      if (url.pathname === "/.well-known/openid-configuration/api/auth") return await fetchLike(req, res, oidcMetadata);
      const query = url.search.slice(1);
      if (url.pathname === "/sign-in" && req.method === "GET") return await setResponse(res, signInPage(query));
      if (url.pathname === "/sign-in" && req.method === "POST") return await fetchLike(req, res, signIn);
      if (url.pathname === "/consent" && req.method === "GET") return await setResponse(res, consentPage(query));
      if (url.pathname === "/consent" && req.method === "POST") return await fetchLike(req, res, consent);
      return await authHandler(req, res);
    } catch (error) {
      console.error(error);
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
      res.end("internal error");
    }
  },
);
server.listen(port, "127.0.0.1", () => console.log(`listening on ${origin}`));
