// An OpenID provider on loopback for tests/test_oauth_e2e.py: oidc-provider with a signing key
// of its own, dynamic client registration, resource indicators issuing JWT access tokens for
// cortex-mcp, and the sign-in and consent done without a person: the user is the request's
// login_hint, and consent grants what was asked. Usage: node provider.mjs PORT RESOURCE_PREFIX
// (prints "ready ISSUER" once it listens). A test tool only: never a real provider's setup.
import { generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';

import Provider, { errors } from 'oidc-provider';

const [port, resourcePrefix] = process.argv.slice(2);
const issuer = `http://127.0.0.1:${port}`;
const signing = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });

const provider = new Provider(issuer, {
  // what clients may register and ask for (the scopes cortex-mcp's metadata lists)
  scopes: ['openid', 'offline_access', 'memories:read', 'memories:write', 'admin'],
  jwks: { keys: [{ ...signing, kid: 'test-key-1', use: 'sig', alg: 'RS256' }] },
  findAccount: async (ctx, id) => ({
    accountId: id,
    claims: async () => ({ sub: id, email: `${id}@example.com` }),
  }),
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => `${resourcePrefix}/mcp`,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, resource) => {
        if (!resource.startsWith(resourcePrefix)) throw new errors.InvalidTarget();
        return {
          scope: 'memories:read memories:write',
          audience: resource,
          accessTokenTTL: 600,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        };
      },
    },
  },
  interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
});
provider.proxy = false;

// sign-in and consent without a person: the user the authorization request's login_hint names
async function interact(req, res) {
  const details = await provider.interactionDetails(req, res);
  const { prompt, params } = details;
  let result;
  if (prompt.name === 'login') {
    result = { login: { accountId: String(params.login_hint || 'nobody') } };
  } else {
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: details.session.accountId, clientId: params.client_id });
    const missing = prompt.details;
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [resource, scopes] of Object.entries(missing.missingResourceScopes || {})) {
      grant.addResourceScope(resource, scopes.join(' '));
    }
    result = { consent: { grantId: await grant.save() } };
  }
  await provider.interactionFinished(req, res, result, { mergeWithLastSubmission: true });
}

const callback = provider.callback();
createServer((req, res) => {
  if (req.url.startsWith('/interaction/')) {
    interact(req, res).catch((err) => {
      res.statusCode = 500;
      res.end(String(err));
    });
    return;
  }
  callback(req, res);
}).listen(Number(port), '127.0.0.1', () => {
  process.stdout.write(`ready ${issuer}\n`);
});
