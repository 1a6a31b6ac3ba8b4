#!/usr/bin/env bash
# The .deb as a person gets it: builds it (from the debug build), installs it with apt, creates an
# ordinary user with an empty home, drives /usr/bin/cairn-desktop's first run under the display
# (tests/tests/package.rs: models from the registries, a first answer from a scripted model
# server), installs a newer version over it and checks the data stays, prints the upgraded app's
# cold start, then removes the package and checks that nothing of it is left under /usr and that
# the user's data is untouched.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh

say() { printf '\033[1;32mpackage-test:\033[0m %s\n' "$*"; }
if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
as_user() { $SUDO runuser -u "$user" -- "$@"; }

target_dir="$(mkdir -p "${CARGO_TARGET_DIR:-$PWD/target}" && cd "${CARGO_TARGET_DIR:-$PWD/target}" && pwd)"
rm -rf "$target_dir/debug/bundle/deb"
scripts/package.sh --debug
deb=$(cat "$target_dir/debug/bundle/deb/latest")
package=$(dpkg-deb -f "$deb" Package)
version=$(dpkg-deb -f "$deb" Version)

user=cairn-package-test
if ! id -u "$user" >/dev/null 2>&1; then
  $SUDO useradd --create-home --shell /bin/bash "$user"
fi
home=$(getent passwd "$user" | cut -d: -f6)
$SUDO rm -rf "$home"
$SUDO mkdir -p "$home"
$SUDO chown "$user:" "$home"

# A run that stopped halfway (a failure, a kill) may have left its package installed, newer than
# this one: start from a machine without it.
if [ "$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null)" = "install ok installed" ]; then
  say "removing the $package an earlier run left installed"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get remove -y --purge "$package" >/dev/null
fi
say "installing $deb"
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$deb" >/dev/null
installed_files=$(mktemp)
dpkg -L "$package" >"$installed_files"
for program in /usr/bin/cairn-desktop /usr/bin/cairn /usr/bin/cairn-model-host; do
  [ -x "$program" ] || { echo "package-test: $program is not installed" >&2; exit 1; }
done
grep -q '^/usr/share/applications/.*\.desktop$' "$installed_files" || { echo "package-test: no desktop entry" >&2; exit 1; }
say "icons: $(grep -c '^/usr/share/icons/hicolor/.*\.png$' "$installed_files") sizes"

# tauri-driver where the user can run it (root's cargo folder is private).
driver_dir=$(mktemp -d)
cp "$(command -v tauri-driver)" "$driver_dir/"
chmod 755 "$driver_dir" "$driver_dir/tauri-driver"

display_pid=""
cleanup() {
  [ -n "$display_pid" ] && kill "$display_pid" 2>/dev/null || true
  rm -rf "$driver_dir" "$installed_files"
}
trap cleanup EXIT
if [ -z "${DISPLAY:-}" ]; then
  export DISPLAY=":$((500 + RANDOM % 400))"
  Xvfb "$DISPLAY" -screen 0 1440x900x24 -nolisten tcp >/dev/null 2>&1 &
  display_pid=$!
  for _ in $(seq 50); do xdpyinfo >/dev/null 2>&1 && break; sleep 0.1; done
fi

say "driving the first run as $user"
CAIRN_PACKAGE_USER="$user" CAIRN_PACKAGE_HOME="$home" CAIRN_PACKAGE_DRIVER="$driver_dir/tauri-driver" \
  cargo test --locked -p cairn-tests --features package-test --test package -- --nocapture

# An upgrade: the same app as a newer version, installed over the first; the data stays.
upgrade_version=$(echo "$version" | awk -F. '{ printf "%d.%d.%d", $1, $2, $3 + 1 }')
CAIRN_PACKAGE_VERSION="$upgrade_version" scripts/package.sh --debug >/dev/null
upgrade=$(cat "$target_dir/debug/bundle/deb/latest")
before=$($SUDO find "$home/.cairn" -type f \( -name config.toml -o -name '*.sqlite' \) -exec sha256sum {} + | sort)
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$upgrade" >/dev/null
[ "$(dpkg-query -W -f='${Version}' "$package")" = "$upgrade_version" ] || { echo "package-test: the upgrade did not install" >&2; exit 1; }
after=$($SUDO find "$home/.cairn" -type f \( -name config.toml -o -name '*.sqlite' \) -exec sha256sum {} + | sort)
[ -n "$before" ] && [ "$before" = "$after" ] || { echo "package-test: the upgrade changed the user's data" >&2; exit 1; }
dpkg -L "$package" >"$installed_files"
say "upgraded $version → $upgrade_version: config and memory untouched"

# Cold start: from the command to the workbench's window on screen, set up as the test left it.
start=$(date +%s%N)
as_user env -i HOME="$home" USER="$user" DISPLAY="$DISPLAY" PATH=/usr/bin:/bin LANG=C.UTF-8 \
  /usr/bin/cairn-desktop >/dev/null 2>&1 &
app_pid=$!
# Polled rather than `xdotool search --sync`: a window that goes away while xdotool walks the tree
# (the first run's, closing) makes it exit with BadWindow, which is not the app failing to start.
shown=""
for _ in $(seq 600); do
  if xdotool search --onlyvisible --name '^Cairn$' >/dev/null 2>&1; then
    shown=1
    break
  fi
  sleep 0.1
done
if [ -n "$shown" ]; then
  say "cold start: $(( ($(date +%s%N) - start) / 1000000 )) ms to the workbench's window"
else
  echo "package-test: the installed app showed no window within 60 s" >&2
  exit 1
fi
$SUDO pkill -TERM -u "$user" -f /usr/bin/cairn-desktop || true
wait "$app_pid" 2>/dev/null || true

say "removing $package"
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get remove -y "$package" >/dev/null
left=0
while read -r path; do
  case "$path" in /usr/*) ;; *) continue ;; esac
  if [ -f "$path" ] || [ -L "$path" ]; then
    echo "package-test: $path is left after the removal" >&2
    left=1
  fi
done <"$installed_files"
[ "$left" -eq 0 ] || exit 1
[ -f "$home/.cairn/config.toml" ] || { echo "package-test: the user's data went with the package" >&2; exit 1; }
say "removed: nothing left in /usr; $home/.cairn kept"
