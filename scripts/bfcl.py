#!/usr/bin/env python3
"""The Berkeley Function Calling Leaderboard's non-live categories through Cairn's `/v1`.

Each question goes to `POST /v1/chat/completions` of a running `cairn serve` with the question's
functions as the caller's tools (converted as BFCL converts them for OpenAI-style models), and
the tool calls that come back are scored with BFCL's own AST checker (`bfcl_eval`). Irrelevance
questions pass when no tool is called. Run it through `scripts/bfcl.sh`, which installs
`bfcl-eval` and starts a `cairn serve` on a fresh data home.

    scripts/bfcl.py --url URL --token TOKEN [--model cairn/local/qwen2.5-coder-1.5b]
                    [--categories simple,multiple,parallel,parallel_multiple,irrelevance]
                    [--limit N] [--json FILE]
"""

import argparse
import json
import statistics
import sys
import time
import types
import urllib.error
import urllib.request
from pathlib import Path

# The category names of the command line, and their files in bfcl_eval's data.
CATEGORIES = {
    "simple": "simple_python",
    "multiple": "multiple",
    "parallel": "parallel",
    "parallel_multiple": "parallel_multiple",
    "irrelevance": "irrelevance",
}


def load_checker(model_name):
    """BFCL's AST checker. Its module imports BFCL's table of every model it knows (and so every
    vendor's SDK) only to ask whether a model's tool names had their dots made underscores; that
    table is given here for the one model measured: OpenAI-style names, so they had."""
    config = types.SimpleNamespace(underscore_to_dot=True)
    shim = types.ModuleType("bfcl_eval.constants.model_config")
    shim.MODEL_CONFIG_MAPPING = {model_name.replace("/", "_"): config, model_name: config}
    sys.modules["bfcl_eval.constants.model_config"] = shim
    from bfcl_eval.constants.enums import Language, ModelStyle
    from bfcl_eval.constants.type_mappings import GORILLA_TO_OPENAPI
    from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker
    from bfcl_eval.model_handler.utils import convert_to_tool

    def to_tools(functions):
        """The functions as BFCL's OpenAI handler sends them (dots in names made underscores,
        Python types made JSON schema types)."""
        return convert_to_tool(functions, GORILLA_TO_OPENAPI, ModelStyle.OPENAI_COMPLETIONS)

    return ast_checker, Language.PYTHON, to_tools


def data_dir():
    import bfcl_eval

    return Path(bfcl_eval.__file__).parent / "data"


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def ask(url, token, model, messages, tools):
    body = json.dumps({"model": model, "messages": messages, "tools": tools}).encode()
    request = urllib.request.Request(
        url.rstrip("/") + "/v1/chat/completions",
        data=body,
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=600) as response:
            return json.load(response)
    except urllib.error.HTTPError as e:
        raise RuntimeError(f"HTTP {e.code}: {e.read().decode(errors='replace')[:300]}") from e


def decoded_calls(reply):
    """The reply's tool calls as BFCL's checker reads them: [{name: {argument: value}}]."""
    calls = reply["choices"][0]["message"].get("tool_calls") or []
    decoded = []
    for call in calls:
        arguments = call["function"].get("arguments") or "{}"
        decoded.append({call["function"]["name"]: json.loads(arguments)})
    return decoded


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--model", default="cairn/local/qwen2.5-coder-1.5b")
    parser.add_argument("--categories", default=",".join(CATEGORIES))
    parser.add_argument("--limit", type=int, default=0, help="the first N questions of each")
    parser.add_argument("--json", help="write every question's result here")
    args = parser.parse_args()

    checker, language, to_tools = load_checker(args.model)
    data = data_dir()
    results = []
    rows = []
    for category in args.categories.split(","):
        name = CATEGORIES[category]
        questions = read_lines(data / f"BFCL_v4_{name}.json")
        answers = {}
        if category != "irrelevance":
            answers = {a["id"]: a for a in read_lines(data / "possible_answer" / f"BFCL_v4_{name}.json")}
        if args.limit:
            questions = questions[: args.limit]
        passed = 0
        seconds = []
        for question in questions:
            started = time.monotonic()
            error = None
            try:
                reply = ask(args.url, args.token, args.model, question["question"][0], to_tools(question["function"]))
                decoded = decoded_calls(reply)
            except Exception as e:  # a failed request or unreadable arguments: a wrong answer
                decoded, error = None, str(e)
            seconds.append(time.monotonic() - started)
            if decoded is None:
                ok = False
            elif category == "irrelevance":
                ok = not decoded
            else:
                verdict = checker(
                    question["function"], decoded, answers[question["id"]]["ground_truth"], language, name, args.model
                )
                ok = verdict["valid"]
                error = None if ok else verdict.get("error")
            passed += ok
            results.append({"id": question["id"], "ok": ok, "calls": decoded, "error": error})
            print(f"{question['id']:<28} {'pass' if ok else 'FAIL'}  {seconds[-1]:5.1f} s  {error or ''}", file=sys.stderr)
        rows.append((category, passed, len(questions), statistics.median(seconds) if seconds else 0))
    print(f"{'category':<18} {'accuracy':>9} {'passed':>9} {'median':>8}")
    for category, passed, total, median in rows:
        print(f"{category:<18} {100 * passed / max(total, 1):8.1f}% {passed:>4}/{total:<4} {median:6.1f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
