#!/usr/bin/env bash
# Builds the Debian package (and an .rpm beside it) with Tauri's bundler: cairn-desktop, the cairn CLI and the model host in
# /usr/bin, the desktop entry and the icons, and the dependencies the binaries really link
# (dpkg-shlibdeps) plus what they load at run time. Prints the package's path and size.
#   scripts/package.sh            a release build (what people install)
#   scripts/package.sh --debug    the debug build the tests already made (fast; for package tests)
# CAIRN_PACKAGE_VERSION overrides the package's version (the package test makes an "upgrade").
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh

say() { printf '\033[1;32mpackage:\033[0m %s\n' "$*"; }
# The debug build is the workspace exactly as ./run test builds it (one set of dependency
# features, so nothing is compiled twice); the release build is the workspace's programs.
profile=release
cargo_flags=(--release --bins)
tauri_flags=()
if [ "${1:-}" = "--debug" ]; then
  profile=debug
  cargo_flags=(--all-targets)
  tauri_flags=(--debug)
fi
target_dir="$(mkdir -p "${CARGO_TARGET_DIR:-$PWD/target}" && cd "${CARGO_TARGET_DIR:-$PWD/target}" && pwd)"
bin="$target_dir/$profile"

# Tauri's bundler: the npm CLI ships it prebuilt (pinned to the tauri crates' minor version).
cli_version=2.12.6
cli_dir="${CAIRN_CACHE:-$HOME/.cache/cairn}/tauri-cli"
tauri="$cli_dir/node_modules/.bin/tauri"
if [ "$("$tauri" --version 2>/dev/null || true)" != "tauri-cli $cli_version" ]; then
  say "installing @tauri-apps/cli $cli_version from npm (once)"
  mkdir -p "$cli_dir"
  npm install --prefix "$cli_dir" --no-audit --no-fund --loglevel=error "@tauri-apps/cli@$cli_version"
fi

scripts/build-ui.sh
cargo build --locked --workspace "${cargo_flags[@]}"

# What the binaries link, as Debian packages (with their minimum versions), plus what they open at
# run time: the tray's appindicator library and a font for Chinese.
shlib_dir="$(mktemp -d)"
trap 'rm -rf "$shlib_dir"' EXIT
mkdir -p "$shlib_dir/debian"
printf 'Source: cairn\n\nPackage: cairn\nArchitecture: any\n' >"$shlib_dir/debian/control"
linked=$(cd "$shlib_dir" && dpkg-shlibdeps -O -e"$bin/cairn-desktop" -e"$bin/cairn" -e"$bin/cairn-model-host" 2>/dev/null \
  | sed -n 's/^shlibs:Depends=//p')
if [ -z "$linked" ]; then
  echo "package: dpkg-shlibdeps found no dependencies" >&2
  exit 1
fi
config=$(python3 - "$linked" "$bin" "${CAIRN_PACKAGE_VERSION:-}" <<'PY'
import json, os, sys
linked, bin_dir, version = sys.argv[1], sys.argv[2], sys.argv[3]
depends = [d.strip() for d in linked.split(",") if d.strip()]
depends += ["libayatana-appindicator3-1", "fonts-wqy-microhei | fonts-noto-cjk"]
files = {
    "/usr/bin/cairn": f"{bin_dir}/cairn",
    "/usr/bin/cairn-model-host": f"{bin_dir}/cairn-model-host",
}
# The icons, named relative to tauri.conf.json (the top level), as absolute paths: the bundler
# reads them from src-tauri, where it runs.
with open("tauri.conf.json") as f:
    icons = [os.path.abspath(icon) for icon in json.load(f)["bundle"]["icon"]]
config = {"bundle": {"icon": icons, "linux": {
    "deb": {"depends": depends, "files": files},
    # Fedora's names for the same libraries (the .rpm is built, not installed, here).
    "rpm": {
        "depends": ["webkit2gtk4.1", "gtk3", "libayatana-appindicator-gtk3", "alsa-lib"],
        "files": files,
    },
}}}
if version:
    config["version"] = version
print(json.dumps(config))
PY
)
say "depends: $(python3 -c 'import json,sys; print(", ".join(json.loads(sys.argv[1])["bundle"]["linux"]["deb"]["depends"]))' "$config")"

# The bundler packs what cargo built (`tauri bundle`; `tauri build` would build the app alone,
# with other features). It runs in the app's crate, src-tauri, and reads its config only from
# there, so the config at the top level is linked in for the while (the build itself is pointed at
# it by src-tauri/build.rs and generate_context!).
ln -sfn ../tauri.conf.json src-tauri/tauri.conf.json
trap 'rm -rf "$shlib_dir"; rm -f src-tauri/tauri.conf.json' EXIT
(cd src-tauri && "$tauri" bundle "${tauri_flags[@]}" --bundles deb,rpm --ci --config "$config")
rm -f src-tauri/tauri.conf.json
deb=$(ls -t "$bin"/bundle/deb/*.deb | head -1)
echo "$deb" >"$bin/bundle/deb/latest"
size=$(stat -c %s "$deb")
say "$deb"
say "size: $(awk -v b="$size" 'BEGIN { printf "%.1f MB", b / 1e6 }') ($(dpkg-deb -f "$deb" Installed-Size) KB installed)"
rpm=$(ls -t "$bin"/bundle/rpm/*.rpm 2>/dev/null | head -1)
if [ -n "$rpm" ]; then
  say "$rpm ($(awk -v b="$(stat -c %s "$rpm")" 'BEGIN { printf "%.1f MB", b / 1e6 }'))"
fi
