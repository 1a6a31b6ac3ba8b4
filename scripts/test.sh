#!/usr/bin/env bash
# Every check CI runs: formatting, clippy (warnings denied), the wasm UI build, all tests (unit,
# integration, the cargo-metadata layering check), the end-to-end desktop test under Xvfb, and the
# Debian package installed, used and removed.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
# The shared evaluation data (fixtures of other agents' history, LoCoMo, audio) is read in place:
# $CAIRN_EVAL_DIR, or ../shared/eval beside the checkout.
if [ -z "${CAIRN_EVAL_DIR:-}" ] && [ -d "$PWD/../shared/eval/transcripts" ]; then
  export CAIRN_EVAL_DIR="$(cd "$PWD/../shared/eval" && pwd)"
fi
# Models that setup installs must be there: their tests fail rather than skip.
export CAIRN_REQUIRE_MODELS=1
models="${CAIRN_HOME:-$HOME/.cairn}/models"
export CAIRN_WHISPER_CT2="${CAIRN_WHISPER_CT2:-$models/whisper-ct2/tiny.en}"
export CAIRN_WHISPER_CT2_BASE="${CAIRN_WHISPER_CT2_BASE:-$models/whisper-ct2/base}"
step() { printf '\n\033[1;34m== %s\033[0m\n' "$*"; }

step "wasm UI build"
scripts/build-ui.sh

step "cargo fmt --check"
cargo fmt --all --check

step "cargo clippy (warnings denied)"
cargo clippy --locked --workspace --all-targets --features cairn-tests/package-test -- -D warnings

step "cargo build (workspace, the desktop app once)"
cargo build --locked --workspace --all-targets

# A display for the desktop end-to-end test, with a compositor so the transparent pet renders.
if [ -z "${DISPLAY:-}" ]; then
  display=":$((90 + RANDOM % 400))"
  Xvfb "$display" -screen 0 1440x900x24 -nolisten tcp >/dev/null 2>&1 &
  xvfb_pid=$!
  trap 'kill $xvfb_pid 2>/dev/null || true' EXIT
  export DISPLAY="$display"
  for _ in $(seq 50); do xdpyinfo >/dev/null 2>&1 && break; sleep 0.1; done
  (xcompmgr >/dev/null 2>&1 &) || true
fi

step "cargo test (everything, including the desktop end-to-end test)"
cargo test --locked --workspace -- --include-ignored

step "the Debian package: built, installed, used by a new user, removed"
scripts/package-test.sh
