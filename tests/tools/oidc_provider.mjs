// A certified OpenID Connect provider (npm oidc-provider) for the test suites: one static client, users with
// passwords and groups, and a plain login page a test (HTTP client or browser) fills in.
// Configured by one JSON document in OIDC_CONFIG: {port, clientId, clientSecret, redirectUris, users, jwks,
// idTokenTtl}; prints "listening <issuer>" once it answers.
import http from 'node:http';
import Provider from 'oidc-provider';

const cfg = JSON.parse(process.env.OIDC_CONFIG);
const issuer = `http://127.0.0.1:${cfg.port}`;
const users = cfg.users; // name -> {password, groups}

const provider = new Provider(issuer, {
  clients: [{
    client_id: cfg.clientId, client_secret: cfg.clientSecret, redirect_uris: cfg.redirectUris,
    grant_types: ['authorization_code'], response_types: ['code'],
  }],
  jwks: cfg.jwks,
  scopes: ['openid', 'profile', 'groups'],
  claims: { openid: ['sub'], profile: ['preferred_username', 'name'], groups: ['groups'] },
  // the claims asked for by scope go into the ID token (what STS and the relying party read)
  conformIdTokenClaims: false,
  pkce: { required: () => true },
  features: { devInteractions: { enabled: false } },
  ttl: { IdToken: cfg.idTokenTtl || 3600 },
  cookies: { keys: ['tierpilot-test-cookie-key'] },
  interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
  async findAccount(ctx, id) {
    if (!users[id]) return undefined;
    return {
      accountId: id,
      async claims() { return { sub: id, preferred_username: id, name: id, groups: users[id].groups }; },
    };
  },
  // a first-party client: no consent screen
  async loadExistingGrant(ctx) {
    const grant = new ctx.oidc.provider.Grant({
      clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId,
    });
    grant.addOIDCScope('openid profile groups');
    await grant.save();
    return grant;
  },
});

const page = (uid, message) => `<!doctype html><html><head><title>Test IdP sign-in</title></head><body>
<h1>Test identity provider</h1>${message ? `<p id="error">${message}</p>` : ''}
<form method="post" action="/interaction/${uid}/login">
<label>Username <input name="login" id="login" autocomplete="username"></label>
<label>Password <input name="password" id="password" type="password" autocomplete="current-password"></label>
<button type="submit" id="submit">Sign in</button></form></body></html>`;

function readForm(req) {
  return new Promise((resolve) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => resolve(new URLSearchParams(body)));
  });
}

const callback = provider.callback();
const server = http.createServer(async (req, res) => {
  const match = /^\/interaction\/([^/?]+)(\/login)?/.exec(req.url);
  if (!match) return callback(req, res);
  try {
    const details = await provider.interactionDetails(req, res);
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'text/html' });
      return res.end(page(details.uid));
    }
    const form = await readForm(req);
    const name = form.get('login');
    if (!users[name] || users[name].password !== form.get('password')) {
      res.writeHead(200, { 'content-type': 'text/html' });
      return res.end(page(details.uid, 'Invalid username or password'));
    }
    await provider.interactionFinished(req, res, { login: { accountId: name } }, { mergeWithLastSubmission: false });
  } catch (err) {
    res.writeHead(400, { 'content-type': 'text/plain' });
    res.end(String(err));
  }
});
server.listen(cfg.port, '127.0.0.1', () => console.log(`listening ${issuer}`));
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => server.close(() => process.exit(0)));
