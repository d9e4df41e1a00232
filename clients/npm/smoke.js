// Drives the unmodified npm `gigachat` client against a partnerapi server.
// cmd/partnerapi/assistant_test.go (TestNpmClient) starts the server and
// reads the last stdout line, which starts with RESULT; the SDK prints its
// own noise (OAUTH UPDATE TOKEN) before it.
const { GigaChat } = require('gigachat');

async function main() {
  // An empty SMOKE_MODEL leaves the model to the client's default
  // ("GigaChat"), as an application that never names one does.
  const model = process.env.SMOKE_MODEL || undefined;
  const client = new GigaChat({
    baseUrl: process.env.SMOKE_BASE_URL,
    authUrl: process.env.SMOKE_AUTH_URL,
    credentials: process.env.SMOKE_CREDENTIALS,
    scope: process.env.SMOKE_SCOPE,
    model,
    timeout: 60,
  });
  const out = {};
  await client.updateToken();
  out.token = true;
  const models = await client.getModels();
  out.models = models.data.map((m) => m.id);
  const one = await client.getModel(out.models[0]);
  out.model = one.id;
  const chat = await client.chat({
    model,
    messages: [{ role: 'user', content: 'Once upon a time' }],
    temperature: 0,
    max_tokens: 12,
  });
  out.chat = { content: chat.choices[0].message.content, finish: chat.choices[0].finish_reason, usage: chat.usage, model: chat.model };
  let text = '';
  let chunks = 0;
  let finish = '';
  for await (const chunk of client.stream({
    model,
    messages: [{ role: 'user', content: 'Once upon a time' }],
    temperature: 0,
    max_tokens: 12,
  })) {
    chunks++;
    text += chunk.choices[0].delta.content || '';
    if (chunk.choices[0].finish_reason) finish = chunk.choices[0].finish_reason;
  }
  out.stream = { content: text, chunks, finish };
  // An event far over net/http's 4 KiB connection buffer: update_interval
  // holds every choice's text back until the end, so four choices leave in
  // one event of over 4 KB. The client JSON-parses each read on its own and
  // dies on an event split across reads, so this passes only if each event
  // reaches the socket in one write (assistant reference §3.4 rule 4).
  let bigEvents = 0;
  let bigChars = 0;
  for await (const chunk of client.stream({
    model,
    messages: [{ role: 'user', content: 'Once' }],
    temperature: 1,
    n: 4,
    max_tokens: 560,
    update_interval: 600,
  })) {
    bigEvents++;
    for (const c of chunk.choices) bigChars += (c.delta.content || '').length;
  }
  out.big = { events: bigEvents, chars: bigChars };
  const tokens = await client.tokensCount(['Once upon a time', 'Lily'], model);
  out.tokens = tokens.tokens.map((t) => t.tokens);
  // Postpaid (CORP) clients get 403 here by design: record the status.
  try {
    out.balance = (await client.balance()).balance;
  } catch (err) {
    out.balance_status = err.response ? err.response.status : String(err);
  }
  console.log('RESULT ' + JSON.stringify(out));
}

main().catch((err) => {
  console.log('ERROR ' + (err && err.stack ? err.stack : String(err)));
  if (err && err.response) console.log('ERROR response ' + err.response.status + ' ' + JSON.stringify(err.response.data));
  process.exit(1);
});
