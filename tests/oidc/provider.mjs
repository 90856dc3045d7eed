// A real OAuth 2.1 / OpenID authorization server for minimcp's tests: oidc-provider (npm),
// configured as an MCP deployment needs it. Not ours: we only configure it.
//
//   node provider.mjs            (run from a folder whose node_modules has oidc-provider)
//
// It listens on a free 127.0.0.1 port and prints one JSON line on stdout,
// {"issuer": "http://127.0.0.1:PORT", ...}, then serves until killed.
//
// What it offers (see README.md):
// - dynamic client registration (RFC 7591), open: no initial access token;
// - authorization code with PKCE (S256 required), through the development login/consent pages
//   (any login name, any password);
// - client credentials, for the pre-registered client "service";
// - resource indicators (RFC 8707): any http://127.0.0.1 resource is a resource server whose
//   scopes are files:read files:write mcp notes:read notes:write; the token's `aud` is the resource. A resource whose
//   path contains "opaque" gets opaque access tokens (for introspection), any other gets
//   JWT access tokens (RFC 9068, signed RS256, keys at /jwks);
// - token introspection (RFC 7662) and revocation, for the resource server client "mcp-server";
// - refresh tokens (offline_access), and a client "short-lived" whose tokens live 1 second;
// - a registered client is not pinned to the scopes it registered with (so it can step up),
//   unless MINIMCP_OIDC_PIN_SCOPES=1: then it is, as oidc-provider does by default (RFC 7591 §2
//   `scope`: a client asking for a scope outside its registration gets invalid_scope);
// - an event log on stderr, one line per metadata request, registration (with the scope it pins the
//   client to, if any: `registered_scope`), authorization (and authorization error) and token grant:
//   `minimcp-event {"event": "grant.success", "grant_type": "refresh_token", ...}` (no token in it).
import http from 'node:http';
import Provider from 'oidc-provider';

const RESOURCE_SCOPES = 'files:read files:write mcp notes:read notes:write';
// Keep a registered client's `scope` (oidc-provider's default: it may only ask for those scopes).
const PIN_SCOPES = process.env.MINIMCP_OIDC_PIN_SCOPES === '1';
export const CLIENTS = [
  // The MCP server itself, as a client of the AS: it may introspect tokens.
  { client_id: 'mcp-server', client_secret: 'mcp-server-secret', grant_types: [], redirect_uris: [],
    response_types: [] },
  // A machine client (client credentials).
  { client_id: 'service', client_secret: 'service-secret', grant_types: ['client_credentials'],
    redirect_uris: [], response_types: [], scope: RESOURCE_SCOPES },
  // The same, with tokens that expire one second after they are issued.
  { client_id: 'short-lived', client_secret: 'short-lived-secret', grant_types: ['client_credentials'],
    redirect_uris: [], response_types: [], scope: RESOURCE_SCOPES },
];

const server = http.createServer();
server.listen(Number(process.env.OIDC_PORT || 0), '127.0.0.1', () => {
  const { port } = server.address();
  const issuer = `http://127.0.0.1:${port}`;
  const shortLived = (client) => (client && client.clientId === 'short-lived' ? 1 : 600);
  const provider = new Provider(issuer, {
    clients: CLIENTS,
    scopes: ['openid', 'offline_access', 'files:read', 'files:write', 'mcp', 'notes:read', 'notes:write'],
    cookies: { keys: ['minimcp-test-cookie-key'] },
    pkce: { required: () => true },
    findAccount: async (ctx, id) => ({ accountId: id, claims: async () => ({ sub: id }) }),
    ttl: {
      AccessToken: (ctx, token, client) => shortLived(client),
      ClientCredentials: (ctx, token, client) => shortLived(client),
      Interaction: 600, Session: 600, Grant: 600, AuthorizationCode: 60, RefreshToken: 3600,
    },
    // A registered client may later ask for scopes beyond those it registered with (step-up,
    // SEP-2350): oidc-provider would pin it to its registered `scope`, so that value is dropped,
    // unless PIN_SCOPES asks for oidc-provider's own behaviour (RFC 7591 §2).
    extraClientMetadata: {
      properties: ['minimcp_unpinned'],
      validator(ctx, key, value, metadata) {
        if (ctx && !PIN_SCOPES) delete metadata.scope; // (ctx is set for a registration, not for CLIENTS above)
      },
    },
    issueRefreshToken: async (ctx, client, code) => client.grantTypeAllowed('refresh_token')
      && code.scopes.has('offline_access'),
    features: {
      devInteractions: { enabled: true },
      registration: { enabled: true },
      introspection: { enabled: true },
      revocation: { enabled: true },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => undefined,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (ctx, resourceIndicator) => {
          if (!resourceIndicator.startsWith('http://127.0.0.1')) {
            throw new Provider.errors.InvalidTarget('resources must be http://127.0.0.1 URLs');
          }
          const opaque = new URL(resourceIndicator).pathname.includes('opaque');
          return {
            scope: RESOURCE_SCOPES,
            audience: resourceIndicator,
            accessTokenFormat: opaque ? 'opaque' : 'jwt',
            ...(opaque ? {} : { jwt: { sign: { alg: 'RS256' } } }),
          };
        },
      },
    },
  });
  provider.proxy = false;
  // What a test may ask the provider's own log: which metadata, registrations, authorizations and
  // grants it served, to whom (never a token, a code or a secret).
  const log = (event, ctx, extra) => {
    const oidc = ctx.oidc || {};
    const params = oidc.params || {};
    process.stderr.write(`minimcp-event ${JSON.stringify({
      event, client_id: oidc.client ? oidc.client.clientId : undefined, grant_type: params.grant_type,
      scope: params.scope, resource: params.resource, ...extra })}\n`);
  };
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.path.startsWith('/.well-known/')) log('metadata', ctx, { path: ctx.path, status: ctx.status });
  });
  provider.on('registration_create.success', (ctx, client) => log('registration_create.success', ctx, {
    client_id: client.clientId, registered_scope: client.scope }));
  provider.on('authorization.success', (ctx) => log('authorization.success', ctx, {}));
  provider.on('authorization.error', (ctx, error) => log('authorization.error', ctx, { error: error.error }));
  // granted_scope: the token response's `scope` (what the token carries), never the token itself
  provider.on('grant.success', (ctx) => log('grant.success', ctx, {
    granted_scope: ctx.body && typeof ctx.body.scope === 'string' ? ctx.body.scope : undefined }));
  provider.on('grant.error', (ctx, error) => log('grant.error', ctx, { error: error.error }));
  server.on('request', provider.callback());
  process.stdout.write(`${JSON.stringify({ issuer, port, pid: process.pid, pin_scopes: PIN_SCOPES })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
