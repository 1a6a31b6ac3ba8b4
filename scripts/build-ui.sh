#!/usr/bin/env bash
# Builds the Leptos UI to ui/dist: cargo (wasm32) → wasm-bindgen → the static files. Uses rustup's
# wasm32 std when installed; otherwise builds std from Debian's sources (rustc-web, -Zbuild-std).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh

target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
dist="ui/dist"
wasm_target=wasm32-unknown-unknown

if [ "${CAIRN_FORCE_BUILD_STD:-0}" != "1" ] && rustup target list --installed 2>/dev/null | grep -q "^$wasm_target\$"; then
  cargo build --locked -p cairn-ui --profile ui --target "$wasm_target"
  wasm="$target_dir/$wasm_target/ui/cairn-ui.wasm"
else
  if [ ! -d /usr/lib/rustlib/src/rust/library ]; then
    echo "build-ui: no wasm32 std: run ./run setup first" >&2
    exit 1
  fi
  lld="$(rustc --print sysroot)/lib/rustlib/x86_64-unknown-linux-gnu/bin/rust-lld"
  fallback_dir="$target_dir/wasm-build-std"
  PATH="/usr/bin:$PATH" RUSTC_BOOTSTRAP=1 CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_LINKER="$lld" \
    RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc \
    /usr/bin/cargo build --locked -p cairn-ui --profile ui --target "$wasm_target" \
    -Zbuild-std=std,panic_abort --target-dir "$fallback_dir"
  wasm="$fallback_dir/$wasm_target/ui/cairn-ui.wasm"
fi

rm -rf "$dist"
mkdir -p "$dist"
wasm-bindgen --target web --no-typescript --out-name cairn_ui --out-dir "$dist" "$wasm"
cp ui/static/* "$dist/"
cp assets/cairn-mark.svg "$dist/"
echo "build-ui: $dist ready ($(du -sh "$dist" | cut -f1))"
