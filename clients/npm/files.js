// Drives the unmodified npm `gigachat` client's file operations against a
// partnerapi server: uploadFile (multipart FormData), getFiles, getFile,
// getImage (the raw bytes), a chat whose message attaches the uploaded text
// file, aiCheck of a text half a person's and half the model's, deleteFile,
// and getFile of the deleted file (an error the SDK throws). cmd/partnerapi/assistant_npm_files_test.go starts the server and
// reads the RESULT line.
const { GigaChat } = require('gigachat');

async function main() {
  const model = process.env.SMOKE_MODEL;
  const client = new GigaChat({
    baseUrl: process.env.SMOKE_BASE_URL,
    authUrl: process.env.SMOKE_AUTH_URL,
    credentials: process.env.SMOKE_CREDENTIALS,
    scope: process.env.SMOKE_SCOPE,
    model,
    timeout: 60,
  });
  const out = {};
  const text = 'Lily had a red ball.';
  const uploaded = await client.uploadFile(new File([Buffer.from(text)], 'notes.txt', { type: 'text/plain' }));
  out.upload = { object: uploaded.object, bytes: uploaded.bytes, filename: uploaded.filename, purpose: uploaded.purpose, id: uploaded.id };
  const bytes = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff, 0x10]);
  const image = await client.uploadFile(new File([bytes], 'pic.png', { type: 'image/png' }), 'assistant');
  out.image = { bytes: image.bytes, purpose: image.purpose };
  out.list = (await client.getFiles()).data.map((f) => [f.filename, f.access_policy]);
  out.one = (await client.getFile(uploaded.id)).filename;
  // getImage asks for application/jpg and reads the body as a binary string.
  out.content = Buffer.from((await client.getImage(image.id)).content, 'binary').toString('hex');
  const chat = await client.chat({
    model,
    messages: [{ role: 'user', content: 'Once upon a time', attachments: [uploaded.id] }],
    temperature: 0,
    max_tokens: 8,
  });
  out.chat = { finish: chat.choices[0].finish_reason, prompt_tokens: chat.usage.prompt_tokens };
  const plain = await client.chat({
    model,
    messages: [{ role: 'user', content: 'Once upon a time' }],
    temperature: 0,
    max_tokens: 8,
  });
  out.plain_prompt_tokens = plain.usage.prompt_tokens;
  // aiCheck: a person's sentence followed by what the model wrote itself.
  const story = await client.chat({
    model,
    messages: [{ role: 'user', content: 'Once upon a time' }],
    temperature: 0,
    max_tokens: 60,
  });
  const human = 'Every benchmark prints ratios measured side by side in one run, against the memory bandwidth it measures.';
  out.ai_human = human;
  out.ai_text = human + ' ' + story.choices[0].message.content;
  out.ai = await client.aiCheck(out.ai_text, model);
  out.deleted = await client.deleteFile(uploaded.id);
  try {
    await client.getFile(uploaded.id);
    out.after_delete = 'found';
  } catch (err) {
    out.after_delete = err.response ? err.response.status : String(err);
  }
  console.log('RESULT ' + JSON.stringify(out));
}

main().catch((err) => {
  console.log('ERROR ' + (err && err.stack ? err.stack : String(err)));
  if (err && err.response) console.log('ERROR response ' + err.response.status + ' ' + JSON.stringify(err.response.data));
  process.exit(1);
});
