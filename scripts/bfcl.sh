#!/usr/bin/env bash
# The Berkeley Function Calling Leaderboard's non-live categories through Cairn's /v1 on Cairn's
# own model (the README's "Tool calls, measured"): installs bfcl-eval (its data and AST checker,
# without the dependencies it needs only to call vendors' APIs) into a virtualenv under
# ~/.cache/cairn, builds cairn, starts `cairn serve` on a fresh data home with the installed
# models linked in, runs scripts/bfcl.py with the arguments given here, and stops the server.
#
#   scripts/bfcl.sh [--categories simple,multiple,parallel,parallel_multiple,irrelevance]
#                   [--limit N] [--model cairn/local/qwen2.5-coder-1.5b] [--json FILE]
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh

BFCL_VERSION=2026.3.23
venv="$HOME/.cache/cairn/bfcl-venv"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
if ! "$venv/bin/python" -c "import bfcl_eval" 2>/dev/null; then
    "$venv/bin/pip" install --quiet --no-deps "bfcl-eval==$BFCL_VERSION" tenacity==9.2.1 \
        filelock==3.20.0 tree_sitter==0.21.3 tree-sitter-java==0.21.0 tree-sitter-javascript==0.21.4
fi

cargo build --quiet -p cairn-cli -p cairn-local --bins
target=$(cargo metadata --format-version 1 --no-deps | "$venv/bin/python" -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')
cairn="$target/debug/cairn"

models="${CAIRN_HOME:-$HOME/.cairn}/models"
if [ ! -d "$models/llm" ]; then
    echo "no models at $models: run ./run setup first" >&2
    exit 1
fi
home=$(mktemp -d)
server=""
cleanup() {
    [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
    rm -rf "$home"
}
trap cleanup EXIT
ln -s "$models" "$home/models"
CAIRN_HOME="$home" "$cairn" serve >"$home/serve.log" 2>&1 &
server=$!
for _ in $(seq 1 100); do
    [ -s "$home/runtime.json" ] && break
    sleep 0.2
done
if [ ! -s "$home/runtime.json" ]; then
    echo "cairn serve did not start:" >&2
    cat "$home/serve.log" >&2
    exit 1
fi
read -r url token < <("$venv/bin/python" -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["api_url"], r["token"])' "$home/runtime.json")
"$venv/bin/python" scripts/bfcl.py --url "$url" --token "$token" "$@"
