# Shared by scripts/easyplan, scripts/test and scripts/bench: install what the build needs (Debian
# packages), then configure and build incrementally: build/ for the tests, build-release/ for the
# binary users run. Build chatter goes to stderr so the easyplan command's stdout stays clean for pipes.
set -euo pipefail

EASYPLAN_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
EASYPLAN_BUILD_DIR="${EASYPLAN_BUILD_DIR:-$EASYPLAN_ROOT/build}"

EASYPLAN_PACKAGES=(
  g++ cmake ninja-build pkg-config clang-format git
  libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libre2-dev libfmt-dev libmimalloc-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  locales
  # tests/cli/export_python_test compiles the exported JAX module; the Python module (api/python) is
  # built with pybind11 for Debian's python3 and tested with its pytest.
  python3 python3-dev pybind11-dev python3-pytest python3-numpy
  # scripts/cost_validation.py reads docs/cost_validation.yaml (ctest cost_validation, scripts/bench).
  python3-yaml
  # tests/report drives Debian's headless Chromium over the DevTools protocol (docs/REPORT.md).
  chromium python3-websocket
  # `check --engine mpi` (kernels/mpi_engine.h) and its tests under mpirun.
  openmpi-bin libopenmpi-dev
  # tests/cli/mpi_check_test: ps and pkill, for the process snapshot of a job that runs too long.
  procps
  # The .deb (cmake/package.cmake, tests/install/deb-package): dpkg-shlibdeps fills its Depends, and
  # CPack's DEB generator runs `file` on what it packs.
  dpkg-dev file
)
# The sanitized build (scripts/test --sanitize, scripts/fuzz): clang and its runtime libraries
# (libFuzzer, ASan, UBSan).
# lld links it (CMakeLists.txt, EASYPLAN_LINKER).
EASYPLAN_SANITIZER_PACKAGES=(clang libclang-rt-dev lld)

# easyplan_install_deps [EXTRA_PACKAGE...]: installs EASYPLAN_PACKAGES and the extra ones if missing.
# One dpkg-query for all of them (one per package cost ~0.15 s each, most of an up-to-date
# scripts/easyplan run).
easyplan_install_deps() {
  local wanted=("${EASYPLAN_PACKAGES[@]}" "$@")
  local installed
  installed="$(dpkg-query -W -f='${Package} ${Status}\n' "${wanted[@]}" 2>/dev/null |
    awk '/ install ok installed$/ {print $1}' || true)"
  local missing=()
  for pkg in "${wanted[@]}"; do
    if ! grep -qxF "$pkg" <<<"$installed"; then
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

# The test build (scripts/test; build/, or EASYPLAN_BUILD_DIR): g++ -O1 without debug info. No -g
# compiles about a fifth faster than RelWithDebInfo (measured on plan.cc, cmd_plan.cc and
# shape_test.cc), and -O1 a quarter faster than -O2 (activations.cc 14.1 s -> 9.2 s, cmd_check.cc
# 16.4 s -> 13.3 s), which keeps CI in its budget. What users run is the release build below.
# EASYPLAN_BUILD_TYPE changes the build type. EASYPLAN_SANITIZED_TESTS=OFF (CI's g++ pass, .ci/run) leaves
# out the test binaries the sanitized suite builds and runs (CMakeLists.txt); it reconfigures when the
# tree was configured otherwise.
easyplan_build() {
  local werror=OFF
  if [[ "${CI:-}" == "true" ]]; then
    werror=ON
  fi
  local sanitized_tests="${EASYPLAN_SANITIZED_TESTS:-ON}"
  if [[ ! -f "$EASYPLAN_BUILD_DIR/build.ninja" ]] ||
    ! grep -q "^EASYPLAN_SANITIZED_TESTS:BOOL=$sanitized_tests\$" "$EASYPLAN_BUILD_DIR/CMakeCache.txt"; then
    cmake -S "$EASYPLAN_ROOT" -B "$EASYPLAN_BUILD_DIR" -G Ninja \
      -DCMAKE_BUILD_TYPE="${EASYPLAN_BUILD_TYPE:-Release}" -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" \
      -DEASYPLAN_WERROR="$werror" -DEASYPLAN_SANITIZED_TESTS="$sanitized_tests" >&2
  fi
  cmake --build "$EASYPLAN_BUILD_DIR" "$@" >&2
}

# easyplan_progress WHAT: reads a build's output on stdin and shows ninja's "[N/M] ..." lines as progress
# on stderr: one updating line on a terminal, else a line every 10%. An up-to-date build prints nothing.
# scripts/easyplan (first run) and scripts/python pipe their builds through it, so a build of minutes
# is not silence.
easyplan_progress() {
  local what="$1" line percent shown=-1 any=0
  while IFS= read -r line; do
    [[ "$line" =~ ^\[([0-9]+)/([0-9]+)\] ]] || continue
    any=1
    percent=$((BASH_REMATCH[1] * 100 / BASH_REMATCH[2]))
    if [[ -t 2 ]]; then
      printf '\reasyplan: building %s %s/%s (%d%%)' "$what" "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" "$percent" >&2
    elif ((percent / 10 > shown)); then
      shown=$((percent / 10))
      echo "easyplan: building $what, ${percent}% (${BASH_REMATCH[1]}/${BASH_REMATCH[2]})" >&2
    fi
  done
  if [[ -t 2 ]] && ((any)); then printf '\n' >&2; fi
}

# The release build: what users run (scripts/easyplan), what scripts/bench measures, and what
# `cmake --install build-release` or `cpack` there installs. g++ -O2, no tests (its `all` is the
# binary and the libraries; the benchmarks build on demand). Directory build-release/, or
# EASYPLAN_RELEASE_BUILD_DIR. Reconfigured when an older layout of it (with tests) is found.
#   easyplan_release_dir; easyplan_build_release [CMAKE_BUILD_ARGS...]
easyplan_release_dir() {
  echo "${EASYPLAN_RELEASE_BUILD_DIR:-$EASYPLAN_ROOT/build-release}"
}
easyplan_build_release() {
  local dir
  dir="$(easyplan_release_dir)"
  if [[ ! -f "$dir/build.ninja" ]] || ! grep -q '^EASYPLAN_BUILD_TESTS:BOOL=OFF' "$dir/CMakeCache.txt" ||
    ! grep -q '^CMAKE_CXX_FLAGS_RELEASE:STRING=-O2 -DNDEBUG$' "$dir/CMakeCache.txt"; then
    cmake -S "$EASYPLAN_ROOT" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" -DEASYPLAN_BUILD_TESTS=OFF >&2
  fi
  cmake --build "$dir" "$@" >&2
}

# The de_DE.UTF-8 locale, which tests use to check that output does not depend on LC_ALL (a locale
# whose decimal point is ',' and thousands separator '.'). Generated when `locale -a` lacks it.
easyplan_ensure_locales() {
  if locale -a 2>/dev/null | grep -qix 'de_DE\.utf-\?8'; then
    return 0
  fi
  echo "easyplan: generating the de_DE.UTF-8 locale" >&2
  local sudo=()
  if [[ $(id -u) -ne 0 ]]; then
    sudo=(sudo)
  fi
  "${sudo[@]}" localedef -i de_DE -f UTF-8 de_DE.UTF-8 >&2 || true
  if ! locale -a 2>/dev/null | grep -qix 'de_DE\.utf-\?8'; then
    echo "easyplan: could not generate the de_DE.UTF-8 locale" >&2
    return 1
  fi
}

# The sanitized build (`scripts/test --sanitize`, and `scripts/fuzz`): clang with ASan + UBSan
# (-DEASYPLAN_SANITIZE=ON) plus libFuzzer coverage instrumentation (-DEASYPLAN_FUZZ=ON) in one
# directory, default build-asan/. One build serves both the sanitized suite and the fuzz targets, so
# CI compiles the tree twice (normal + this), not three times. Debug with `-O1 -g1`: -O1 keeps the
# sanitized suite fast, and line-tables-only debug info (enough for symbolized sanitizer reports)
# compiles about 25% faster than -g (docs/RELIABILITY.md has the measurements).
#   easyplan_build_sanitized [CMAKE_BUILD_ARGS...]
easyplan_sanitized_dir() {
  echo "${EASYPLAN_ASAN_BUILD_DIR:-$EASYPLAN_ROOT/build-asan}"
}
easyplan_build_sanitized() {
  local dir
  dir="$(easyplan_sanitized_dir)"
  local werror=OFF
  if [[ "${CI:-}" == "true" ]]; then
    werror=ON
  fi
  # Four gtest shards per test binary instead of one process per test case (see easyplan_add_gtest).
  if [[ ! -f "$dir/build.ninja" ]] || ! grep -q '^EASYPLAN_FUZZ:BOOL=ON' "$dir/CMakeCache.txt" ||
    ! grep -q '^EASYPLAN_TEST_SHARDS:STRING=4' "$dir/CMakeCache.txt" ||
    ! grep -q '^EASYPLAN_LINKER:STRING=lld' "$dir/CMakeCache.txt"; then
    rm -rf "$dir"
    cmake -S "$EASYPLAN_ROOT" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-g1 -O1" \
      -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
      -DEASYPLAN_SANITIZE=ON -DEASYPLAN_FUZZ=ON -DEASYPLAN_TEST_SHARDS=4 -DEASYPLAN_LINKER=lld \
      -DEASYPLAN_WERROR="$werror" >&2
  fi
  cmake --build "$dir" "$@" >&2
}

# Sanitizer settings for running sanitized binaries; values already in the environment win.
easyplan_sanitizer_env() {
  export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:check_initialization_order=1:detect_stack_use_after_return=1}"
  export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
}

# The libFuzzer targets (tests/fuzz/targets.txt) and the limits every run and merge of them uses.
EASYPLAN_FUZZ_TARGETS_FILE="$EASYPLAN_ROOT/tests/fuzz/targets.txt"
# -timeout: an input slower than 10 s is a finding (a hang); -rss_limit_mb: so is a memory blow-up.
# EASYPLAN_FUZZ_TIMEOUT raises the first (CI's smoke run makes it a hang guard, 60 s: an input's
# wall-clock time there depends on what else the machine runs, and a slow input is not a finding).
EASYPLAN_FUZZ_LIMITS=(-timeout="${EASYPLAN_FUZZ_TIMEOUT:-10}" -rss_limit_mb=2560)
# easyplan_fuzz_targets SCRIPT TARGET|all: sets the array `targets` to the named target, or every one;
# an unknown name is a usage error (exit 2) that lists them.
easyplan_fuzz_targets() {
  local script="$1" wanted="$2" all
  mapfile -t all < <(grep -v '^\s*\(#\|$\)' "$EASYPLAN_FUZZ_TARGETS_FILE" | awk '{print $1}')
  if [[ "$wanted" == all ]]; then
    targets=("${all[@]}")
  elif printf '%s\n' "${all[@]}" | grep -qx "$wanted"; then
    targets=("$wanted")
  else
    echo "$script: unknown target '$wanted'; targets: ${all[*]}" >&2
    exit 2
  fi
}
