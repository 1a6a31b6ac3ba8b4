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

# wasm-bindgen and the static files go to a staging folder first; ui/dist then only takes the files
# whose bytes changed, and loses those that are gone. The desktop app embeds ui/dist (its build
# script watches it, Tauri includes every file), so cargo goes by the files' mtimes: rewriting
# identical files would rebuild and relink the app (minutes in release) when nothing changed.
staging="$(mktemp -d "${TMPDIR:-/tmp}/cairn-ui-dist.XXXXXX")"
trap 'rm -rf "$staging"' EXIT
wasm-bindgen --target web --no-typescript --out-name cairn_ui --out-dir "$staging" "$wasm"
cp ui/static/* "$staging/"
cp assets/cairn-mark.svg "$staging/"

mkdir -p "$dist"
changed=0
# Files that are new or whose bytes differ replace their old copy; identical ones stay untouched.
while IFS= read -r -d '' file; do
  file="${file#./}"
  if [ -d "$dist/$file" ]; then
    rm -rf "${dist:?}/$file"
  elif cmp -s "$staging/$file" "$dist/$file"; then
    continue
  fi
  # A file of the old build where the new one has a folder gives way to it.
  parent="$(dirname "$file")"
  while [ "$parent" != . ]; do
    if [ -e "$dist/$parent" ] && [ ! -d "$dist/$parent" ]; then rm -f "${dist:?}/$parent"; fi
    parent="$(dirname "$parent")"
  done
  mkdir -p "$(dirname "$dist/$file")"
  cp "$staging/$file" "$dist/$file"
  changed=$((changed + 1))
done < <(cd "$staging" && find . -type f -print0)
# Files (and then folders) the new build no longer has go.
while IFS= read -r -d '' file; do
  file="${file#./}"
  if [ ! -f "$staging/$file" ]; then
    rm -f "${dist:?}/$file"
    changed=$((changed + 1))
  fi
done < <(cd "$dist" && find . ! -type d -print0)
find "$dist" -mindepth 1 -type d -empty -delete

if [ "$changed" -eq 0 ]; then
  echo "build-ui: $dist unchanged ($(du -sh "$dist" | cut -f1))"
else
  echo "build-ui: $dist ready, $changed file(s) updated ($(du -sh "$dist" | cut -f1))"
fi
