// Drives the unmodified npm `gigachat` client's embeddings() and a chat with
// functions against a partnerapi server whose models are served by an
// upstream. cmd/partnerapi/assistant_upstream_e2e_test.go starts the server
// (with a fake OpenAI-compatible upstream) and reads the RESULT line.
const { GigaChat } = require('gigachat');

async function main() {
  const client = new GigaChat({
    baseUrl: process.env.SMOKE_BASE_URL,
    authUrl: process.env.SMOKE_AUTH_URL,
    credentials: process.env.SMOKE_CREDENTIALS,
    scope: process.env.SMOKE_SCOPE,
    model: process.env.SMOKE_MODEL,
    timeout: 60,
  });
  const out = {};
  // The client's default model is 'Embeddings'.
  const emb = await client.embeddings(['First text', 'Second text here']);
  out.embeddings = emb.data.map((d) => ({ index: d.index, embedding: d.embedding, tokens: d.usage.prompt_tokens }));
  const chat = await client.chat({
    messages: [{ role: 'user', content: 'weather' }],
    functions: [{ name: 'weather_forecast', description: 'Forecast', parameters: { type: 'object', properties: { location: { type: 'string' } } } }],
    function_call: 'auto',
  });
  const m = chat.choices[0].message;
  out.call = { finish: chat.choices[0].finish_reason, function_call: m.function_call, state_id: m.functions_state_id };
  console.log('RESULT ' + JSON.stringify(out));
}

main().catch((err) => {
  console.log('ERROR ' + (err && err.stack ? err.stack : String(err)));
  if (err && err.response) console.log('ERROR response ' + err.response.status + ' ' + JSON.stringify(err.response.data));
  process.exit(1);
});
