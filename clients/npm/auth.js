// Drives the unmodified npm `gigachat` client's ways to authenticate
// (reference §7) against a partnerapi server: settings taken from the
// GIGACHAT_* environment alone, a refused token dropped and replaced after
// a 401 with the call retried once, and token-only mode, with a good token
// and a refused one; and the stream as an event emitter (stream_readable). cmd/partnerapi/assistant_npm_auth_test.go starts the
// server, sets the environment and reads the RESULT line.
const { GigaChat } = require('gigachat');

async function main() {
  const out = {};
  // Every setting from GIGACHAT_BASE_URL, GIGACHAT_AUTH_URL,
  // GIGACHAT_CREDENTIALS, GIGACHAT_SCOPE, GIGACHAT_MODEL, GIGACHAT_TIMEOUT.
  const env = new GigaChat({});
  const chat = await env.chat({ messages: [{ role: 'user', content: 'Once upon a time' }], temperature: 0, max_tokens: 4 });
  out.env = { model: chat.model, finish: chat.choices[0].finish_reason, content: chat.choices[0].message.content };
  // stream_readable: the stream as an EventEmitter of chunks, then end.
  const emitter = await env.stream_readable({ messages: [{ role: 'user', content: 'Once upon a time' }], temperature: 0, max_tokens: 4 });
  out.readable = await new Promise((resolve, reject) => {
    let content = '';
    let finish = '';
    emitter.on('chunk', (c) => {
      content += c.choices[0].delta.content || '';
      if (c.choices[0].finish_reason) finish = c.choices[0].finish_reason;
    });
    emitter.on('end', () => resolve({ content, finish }));
    emitter.on('error', reject);
  });
  // A token the server does not know: the first call is 401, the client
  // drops it, fetches a new one with its credentials and retries.
  const stale = new GigaChat({ accessToken: 'not-a-token-of-this-server' });
  out.stale = (await stale.getModels()).data.map((m) => m.id);
  // Token-only mode: no credentials, no OAuth call.
  const only = new GigaChat({ credentials: '', accessToken: process.env.SMOKE_ACCESS_TOKEN });
  out.tokenOnly = (await only.getModels()).data.map((m) => m.id);
  const refused = new GigaChat({ credentials: '', accessToken: 'not-a-token-of-this-server' });
  try {
    await refused.getModels();
    out.refused = 'no error';
  } catch (err) {
    out.refused = { name: err.constructor.name, status: err.response ? err.response.status : null, body: err.response ? err.response.data : null };
  }
  console.log('RESULT ' + JSON.stringify(out));
}

main().catch((err) => {
  console.log('ERROR ' + (err && err.stack ? err.stack : String(err)));
  if (err && err.response) console.log('ERROR response ' + err.response.status + ' ' + JSON.stringify(err.response.data));
  process.exit(1);
});
