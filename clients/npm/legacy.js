// Drives the unmodified npm `gigachat` client's legacy password flow
// (reference §1): configured with `user` and `password` instead of
// `credentials`, it fetches its token with POST {baseUrl}/token and Basic
// user:password and reads {tok, exp}. Then a chat with that token, and the
// same flow with a wrong password. Over HTTPS the server's certificate is
// trusted through NODE_EXTRA_CA_CERTS, through the client's own httpsAgent
// option (LEGACY_CA_FILE: an https.Agent with that CA), or not at all.
// cmd/partnerapi/assistant_npm_legacy_test.go starts the server and reads
// the RESULT line; a step that fails is reported in it, not thrown, so a
// test can assert how it failed.
const fs = require('fs');
const https = require('https');
const { GigaChat } = require('gigachat');

function client(password) {
  const config = {
    baseUrl: process.env.LEGACY_BASE_URL,
    // No credentials, so that a GIGACHAT_CREDENTIALS in the environment
    // cannot send the client down the OAuth flow instead.
    credentials: '',
    user: process.env.LEGACY_USER,
    password,
    model: process.env.LEGACY_MODEL,
    timeout: 60,
  };
  if (process.env.LEGACY_CA_FILE) {
    config.httpsAgent = new https.Agent({ ca: fs.readFileSync(process.env.LEGACY_CA_FILE) });
  }
  return new GigaChat(config);
}

// failure is what the client reports: its error class, the TLS or network
// code, and the HTTP status and body when the server answered.
function failure(err) {
  return {
    name: err.constructor ? err.constructor.name : String(err),
    code: err.code || (err.cause && err.cause.code) || null,
    message: err.message,
    status: err.response ? err.response.status : null,
    body: err.response ? err.response.data : null,
  };
}

async function main() {
  const out = {};
  const good = client(process.env.LEGACY_PASSWORD);
  try {
    const chat = await good.chat({ messages: [{ role: 'user', content: 'Once upon a time' }], temperature: 0, max_tokens: 4 });
    out.good = {
      model: chat.model,
      finish: chat.choices[0].finish_reason,
      content: chat.choices[0].message.content,
      // What the client took from {tok, exp}: it keeps exp as the token's
      // expires_at.
      expiresAt: good._accessToken ? good._accessToken.expires_at : null,
      tokenLength: good.token ? good.token.length : 0,
    };
  } catch (err) {
    out.good = { error: failure(err) };
  }
  const wrong = client(process.env.LEGACY_PASSWORD + 'x');
  try {
    await wrong.getModels();
    out.wrong = { error: null };
  } catch (err) {
    out.wrong = { error: failure(err) };
  }
  console.log('RESULT ' + JSON.stringify(out));
}

main().catch((err) => {
  console.log('ERROR ' + (err && err.stack ? err.stack : String(err)));
  process.exit(1);
});
