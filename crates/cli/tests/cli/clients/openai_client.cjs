// Drives `cairn serve`'s OpenAI-compatible endpoint with OpenAI's own Node client, as another
// program would, and prints one JSON line per check for the Rust test to compare. CommonJS, so that
// NODE_PATH finds the package setup installed.

const OpenAI = require("openai");

async function main() {
const client = new OpenAI({ baseURL: process.env.CAIRN_API + "/v1", apiKey: process.env.CAIRN_KEY });
const say = (fields) => console.log(JSON.stringify(fields));

const models = [];
for await (const model of client.models.list()) models.push(model.id);
say({ models });

const whole = await client.chat.completions.create({
  model: "cairn",
  messages: [
    { role: "system", content: "Be brief." },
    { role: "user", content: "What is 2 + 2?" },
  ],
});
say({ whole: whole.choices[0].message.content, finish: whole.choices[0].finish_reason });

let streamed = "";
let usage = null;
const stream = await client.chat.completions.create({
  model: "cairn",
  messages: [{ role: "user", content: "And 3 + 3?" }],
  stream: true,
  stream_options: { include_usage: true },
});
for await (const chunk of stream) {
  if (chunk.choices.length && chunk.choices[0].delta.content) streamed += chunk.choices[0].delta.content;
  if (chunk.usage) usage = chunk.usage.total_tokens;
}
say({ streamed, usage_is_int: Number.isInteger(usage) });

const called = await client.chat.completions.create({
  model: "cairn/mock/m1",
  messages: [{ role: "user", content: "Weather in Paris?" }],
  tools: [
    {
      type: "function",
      function: {
        name: "get_weather",
        description: "The weather in a city.",
        parameters: { type: "object", properties: { city: { type: "string" } } },
      },
    },
  ],
});
const call = called.choices[0].message.tool_calls[0];
say({ tool: call.function.name, arguments: JSON.parse(call.function.arguments), finish: called.choices[0].finish_reason });

try {
  await client.chat.completions.create({ model: "gpt-unknown", messages: [{ role: "user", content: "hi" }] });
  say({ unknown_model: "answered" });
} catch (e) {
  say({ unknown_model: e.status });
}

try {
  const stranger = new OpenAI({ baseURL: process.env.CAIRN_API + "/v1", apiKey: "sk-wrong" });
  await stranger.models.list();
  say({ wrong_key: "answered" });
} catch (e) {
  say({ wrong_key: e.status });
}
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
