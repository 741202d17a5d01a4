# Shared by scripts/easyplan, scripts/test and scripts/bench: install what the build needs (Debian
# packages), then configure and build incrementally. Build chatter goes to stderr so the easyplan
# command's stdout stays clean for pipes.
set -euo pipefail

EASYPLAN_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
EASYPLAN_BUILD_DIR="${EASYPLAN_BUILD_DIR:-$EASYPLAN_ROOT/build}"

EASYPLAN_PACKAGES=(
  g++ cmake ninja-build pkg-config clang-format git
  libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libre2-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
)

easyplan_install_deps() {
  local missing=()
  for pkg in "${EASYPLAN_PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$pkg")
    fi
  done
  if ((${#missing[@]} == 0)); then
    return 0
  fi
  echo "easyplan: installing ${missing[*]}" >&2
  local sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    sudo=(sudo)
  fi
  "${sudo[@]}" apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >&2
}

easyplan_build() {
  local werror=OFF
  if [[ "${CI:-}" == "true" ]]; then
    werror=ON
  fi
  if [[ ! -f "$EASYPLAN_BUILD_DIR/build.ninja" ]]; then
    cmake -S "$EASYPLAN_ROOT" -B "$EASYPLAN_BUILD_DIR" -G Ninja \
      -DCMAKE_BUILD_TYPE="${EASYPLAN_BUILD_TYPE:-RelWithDebInfo}" -DEASYPLAN_WERROR="$werror" >&2
  fi
  cmake --build "$EASYPLAN_BUILD_DIR" "$@" >&2
}
