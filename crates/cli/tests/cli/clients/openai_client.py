"""Drives `cairn serve`'s OpenAI-compatible endpoint with OpenAI's own Python client, as another
program would, and prints one JSON line per check for the Rust test to compare."""

import json
import os

import openai

client = openai.OpenAI(base_url=os.environ["CAIRN_API"] + "/v1", api_key=os.environ["CAIRN_KEY"])


def say(**fields):
    print(json.dumps(fields), flush=True)


say(models=[m.id for m in client.models.list()])

whole = client.chat.completions.create(
    model="cairn",
    messages=[
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "What is 2 + 2?"},
    ],
)
say(whole=whole.choices[0].message.content, finish=whole.choices[0].finish_reason)

pieces, usage = [], None
for chunk in client.chat.completions.create(
    model="cairn",
    messages=[{"role": "user", "content": "And 3 + 3?"}],
    stream=True,
    stream_options={"include_usage": True},
):
    if chunk.choices and chunk.choices[0].delta.content:
        pieces.append(chunk.choices[0].delta.content)
    if chunk.usage is not None:
        usage = chunk.usage.total_tokens
say(streamed="".join(pieces), usage_is_int=isinstance(usage, int))

tools = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather in a city.",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
called = client.chat.completions.create(
    model="cairn/mock/m1",
    messages=[{"role": "user", "content": "Weather in Paris?"}],
    tools=tools,
)
call = called.choices[0].message.tool_calls[0]
say(tool=call.function.name, arguments=json.loads(call.function.arguments), finish=called.choices[0].finish_reason)

try:
    client.chat.completions.create(model="gpt-unknown", messages=[{"role": "user", "content": "hi"}])
    say(unknown_model="answered")
except openai.NotFoundError as e:
    say(unknown_model=e.status_code)

try:
    openai.OpenAI(base_url=os.environ["CAIRN_API"] + "/v1", api_key="sk-wrong").models.list()
    say(wrong_key="answered")
except openai.AuthenticationError as e:
    say(wrong_key=e.status_code)
