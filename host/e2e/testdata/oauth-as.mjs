// A real OAuth 2.1 authorization server for cairn's OAuth tests: panva's
// oidc-provider, with client_credentials and resource indicators, so that
// access tokens are JWTs whose aud is the resource the client names.
// node oauth-as.mjs
// Prints one JSON line, {issuer, jwk} (jwk: its private signing key, for
// the Go test to mint tokens the server would refuse), then serves until
// killed. Clients: cairn-writer (cairn:read cairn:write), cairn-reader
// (cairn:read), both with the secret "s3cret".
import http from 'node:http';
import crypto from 'node:crypto';
import Provider from 'oidc-provider';

const { privateKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
const jwk = { ...privateKey.export({ format: 'jwk' }), kid: 'as-key-1', alg: 'ES256', use: 'sig' };

const server = http.createServer();
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const client = (id, scope) => ({
  client_id: id,
  client_secret: 's3cret',
  grant_types: ['client_credentials'],
  redirect_uris: [],
  response_types: [],
  id_token_signed_response_alg: 'ES256',
  scope,
});
const provider = new Provider(issuer, {
  clients: [client('cairn-writer', 'cairn:read cairn:write'), client('cairn-reader', 'cairn:read')],
  scopes: ['cairn:read', 'cairn:write', 'cairn:admin'],
  jwks: { keys: [jwk] },
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      getResourceServerInfo: (ctx, resourceIndicator) => ({
        scope: 'cairn:read cairn:write cairn:admin',
        audience: resourceIndicator,
        accessTokenTTL: 300,
        accessTokenFormat: 'jwt',
        jwt: { sign: { alg: 'ES256' } },
      }),
    },
  },
});
server.on('request', provider.callback());
console.log(JSON.stringify({ issuer, jwk }));
