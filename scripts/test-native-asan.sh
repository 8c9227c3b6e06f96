#!/usr/bin/env bash
# Builds the addon with AddressSanitizer + UndefinedBehaviorSanitizer (native/CMakeLists.txt,
# KUBELET_TS_SANITIZE=ON, into build-asan/) and runs the native tests (dist/test/native/, plus
# the relist differ's table tests) with it loaded through KUBELET_TS_NATIVE_ADDON, then the PLEG
# decoder's fuzz target for KTS_FUZZ_SECONDS (default 8; scripts/fuzz-pleg.sh). Exits non-zero on
# a sanitizer report, a test failure or a fuzz failure.
#   bash scripts/test-native-asan.sh [extra node --test args]
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

die() { echo "test-native-asan: $*" >&2; exit 1; }

# Offline: headers of the running node (cmake-js would otherwise download them).
if [ -z "${npm_config_nodedir:-}" ]; then
  prefix=$(node -p 'require("path").resolve(process.execPath, "../..")')
  [ -f "$prefix/include/node/node_api.h" ] && export npm_config_nodedir="$prefix"
fi

mkdir -p build-asan
node_modules/.bin/cmake-js build -d native -O build-asan --CDKUBELET_TS_SANITIZE=ON >build-asan/build.log 2>&1 \
  || { cat build-asan/build.log >&2; die "sanitizer build failed"; }
addon="$PWD/build-asan/Release/kubelet_ts_native.node"
[ -f "$addon" ] || die "no $addon after the build"

# Compile the tests (errors in other folders do not stop tsc from emitting), unless the caller
# has just built dist/ (scripts/test.sh sets KUBELET_TS_DIST_BUILT=1).
[ -n "${KUBELET_TS_DIST_BUILT:-}" ] || npx tsc -p tsconfig.json >/dev/null 2>&1 || true
ls dist/test/native/*.test.js >/dev/null 2>&1 || die "no compiled tests in dist/test/native/"

cxx=${CXX:-g++}
asan=$($cxx -print-file-name=libasan.so)
ubsan=$($cxx -print-file-name=libubsan.so)
[ -f "$asan" ] || die "libasan.so not found via $cxx -print-file-name"
preload="$asan"
[ -f "$ubsan" ] && preload="$preload:$ubsan"

log=$(mktemp)
trap 'rm -f "$log"' EXIT
shopt -s nullglob
differ_tests=(dist/test/pleg/relist-diff*.test.js)
shopt -u nullglob
# node itself leaks on exit by design: no leak checking. Children of the tests inherit all this.
env LD_PRELOAD="$preload" \
  ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:abort_on_error=0:exitcode=86" \
  UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" \
  KUBELET_TS_NATIVE_ADDON="$addon" \
  node --test "$@" dist/test/native/ "${differ_tests[@]}" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}

if grep -qE 'ERROR: AddressSanitizer|runtime error:|SUMMARY: (Address|UndefinedBehavior)Sanitizer' "$log"; then
  die "sanitizer report (see above)"
fi
[ "$status" -eq 0 ] || die "tests failed (exit $status)"
grep -qE '^(# |ℹ )pass [1-9]' "$log" || die "no test passed: was anything run?"

# The relist decoder's fuzz target, briefly (scripts/fuzz-pleg.sh runs it for longer).
bash scripts/fuzz-pleg.sh "${KTS_FUZZ_SECONDS:-8}" || die "pleg fuzz target failed"
# The kmsg OOM and cgroup file parsers' fuzz targets, briefly (scripts/fuzz-parsers.sh).
bash scripts/fuzz-parsers.sh "${KTS_PARSER_FUZZ_SECONDS:-4}" || die "parser fuzz targets failed"
echo "test-native-asan: OK ($addon)"
