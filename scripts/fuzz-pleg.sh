#!/usr/bin/env bash
# Builds the PLEG relist decoder/differ fuzz target (native/fuzz/pleg_fuzz.cc) with
# AddressSanitizer + UndefinedBehaviorSanitizer and runs its standalone driver (random and
# mutated relist sequences; g++ has no libFuzzer) for a bounded time.
#   bash scripts/fuzz-pleg.sh [seconds=20] [driver args...]     e.g. --seed 42, or crash files
# Exits non-zero on a sanitizer report or a failed check; the failing input is left in
# build-asan/pleg-fuzz/crash-pleg-<pid>.bin (re-run: bash scripts/fuzz-pleg.sh 0 <file>).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

die() { echo "fuzz-pleg: $*" >&2; exit 1; }

seconds=${1:-20}
[ $# -gt 0 ] && shift
out=build-asan/pleg-fuzz
mkdir -p "$out"
bin="$out/pleg_fuzz"
cxx=${CXX:-g++}
# The target, the reference decoders it checks the fast ones against (fuzz only, not in the
# addon) and the addon's PLEG sources (native/src/pleg*.cc). Sources are passed as absolute paths
# so crash files given as arguments stay relative to here. Rebuilt only when a source (or this
# script) is newer than the binary.
srcs=("$PWD"/native/fuzz/pleg_fuzz.cc "$PWD"/native/fuzz/pleg_reference_decoder.cc "$PWD"/native/src/pleg*.cc)
if [ ! -x "$bin" ] || [ -n "$(find native/fuzz/pleg_* native/fuzz/fuzz_driver.h native/src/pleg* "$0" -newer "$bin" 2>/dev/null)" ]; then
$cxx -std=c++17 -O1 -g -fno-omit-frame-pointer -fno-exceptions -Wall -Wextra \
  -fsanitize=address,undefined -fno-sanitize-recover=all \
  -o "$bin" "${srcs[@]}" >"$out/build.log" 2>&1 \
  || { cat "$out/build.log" >&2; rm -f "$bin"; die "build failed"; }
fi

log=$(mktemp)
trap 'rm -f "$log"' EXIT
args=("$@")
[ ${#args[@]} -eq 0 ] && args=(--seconds "$seconds")
# Crash files land in $out: run from there with absolute paths for any inputs given.
abs=()
for a in "${args[@]}"; do
  if [ -f "$a" ]; then abs+=("$(cd "$(dirname "$a")" && pwd)/$(basename "$a")"); else abs+=("$a"); fi
done
(cd "$out" && ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:abort_on_error=0:exitcode=86" \
  UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" ./pleg_fuzz "${abs[@]}") 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:|SUMMARY: (Address|UndefinedBehavior|Leak)Sanitizer|CHECK FAILED' "$log"; then
  die "failure reported (see above); input saved under $out/"
fi
[ "$status" -eq 0 ] || die "pleg_fuzz exited with $status"
echo "fuzz-pleg: OK"
