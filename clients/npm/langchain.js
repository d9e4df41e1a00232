// Drives the unmodified npm `langchain-gigachat` package (LangChain's
// GigaChat chat model and embeddings, built on the `gigachat` client)
// against a partnerapi server. cmd/partnerapi/assistant_langchain_test.go
// (TestLangChainClient) starts the server with a local model (SMOKE_MODEL)
// and, behind a fake upstream, a model that calls functions
// (SMOKE_TOOLS_MODEL) and an embedder (SMOKE_EMBEDDINGS_MODEL); it reads
// the last stdout line, which starts with RESULT.
const { GigaChat, GigaChatEmbeddings } = require('langchain-gigachat');
const { HumanMessage, ToolMessage } = require('@langchain/core/messages');

const connection = {
  baseUrl: process.env.SMOKE_BASE_URL,
  authUrl: process.env.SMOKE_AUTH_URL,
  credentials: process.env.SMOKE_CREDENTIALS,
  scope: process.env.SMOKE_SCOPE,
  timeout: 60,
  // LangChain retries failures (a 422 too) six times with backoff: one
  // attempt keeps the test fast and shows the server's first answer.
  maxRetries: 0,
};

// The tool as LangChain users pass it to bindTools in GigaChat's own
// function format.
const weather = {
  name: 'weather_forecast',
  description: 'Forecast',
  parameters: {
    type: 'object',
    properties: { location: { type: 'string', description: 'City' }, num_days: { type: 'integer', description: 'Days' } },
    required: ['location'],
  },
};

// message keeps what the test asserts on of an AIMessage (or chunk).
function message(m) {
  return {
    type: m._getType(),
    content: m.content,
    tool_calls: (m.tool_calls || []).map((c) => ({ name: c.name, args: c.args, id: c.id })),
    usage: m.usage_metadata,
    finish: m.response_metadata && m.response_metadata.finish_reason,
    request_id: m.response_metadata && m.response_metadata.xHeaders && m.response_metadata.xHeaders.xRequestID,
  };
}

async function main() {
  const out = {};
  // Greedy decoding, so that invoke and stream must say the same.
  const chat = new GigaChat({ ...connection, model: process.env.SMOKE_MODEL, temperature: 0, maxTokens: 12 });
  out.invoke = message(await chat.invoke([new HumanMessage('Once upon a time')]));

  let text = '';
  let chunks = 0;
  for await (const chunk of await chat.stream('Once upon a time')) {
    chunks++;
    text += chunk.content;
  }
  out.stream = { content: text, chunks };

  // The local model's chat template has no place for functions, so the
  // server refuses them (422) before generating: the error must reach the
  // LangChain user with its status.
  try {
    out.tools_local = message(await chat.bindTools([weather]).invoke('What is the weather in Oslo?'));
  } catch (err) {
    out.tools_local_error = err.response ? { status: err.response.status, data: err.response.data } : String(err);
  }

  // The upstream model is made to call the tool (function_call {name}),
  // then is given the result back as LangChain passes it: the AIMessage
  // and a ToolMessage.
  const caller = new GigaChat({ ...connection, model: process.env.SMOKE_TOOLS_MODEL });
  const bound = caller.bindTools([weather], { tool_choice: { name: 'weather_forecast' } });
  const ask = new HumanMessage('weather');
  const called = await bound.invoke([ask]);
  out.tool_call = message(called);
  let streamed;
  for await (const chunk of await bound.stream([ask])) {
    streamed = streamed ? streamed.concat(chunk) : chunk;
  }
  out.tool_call_stream = message(streamed);
  const answer = await bound.invoke([
    ask,
    called,
    new ToolMessage({ content: '{"temperature":3}', tool_call_id: called.tool_calls[0].id }),
  ]);
  out.tool_result = message(answer);
  out.structured = await caller.withStructuredOutput(weather).invoke('weather');

  const emb = new GigaChatEmbeddings({ ...connection, model: process.env.SMOKE_EMBEDDINGS_MODEL });
  out.embed_query = await emb.embedQuery('First text');
  out.embed_documents = await emb.embedDocuments(['First text', 'Second text here']);
  console.log('RESULT ' + JSON.stringify(out));
}

main().catch((err) => {
  console.log('ERROR ' + (err && err.stack ? err.stack : String(err)));
  if (err && err.response) console.log('ERROR response ' + err.response.status + ' ' + JSON.stringify(err.response.data));
  process.exit(1);
});
