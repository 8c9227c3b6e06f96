#!/usr/bin/env bash
# Builds the kmsg OOM parser and cgroup file parser fuzz targets (native/fuzz/{kmsg,cgroup}_fuzz.cc)
# with AddressSanitizer + UndefinedBehaviorSanitizer and runs each standalone driver for a bounded
# time. Exits non-zero on a sanitizer report or a failed check (input left in build-asan/parsers-fuzz/).
#   bash scripts/fuzz-parsers.sh [seconds per target=5]
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

die() { echo "fuzz-parsers: $*" >&2; exit 1; }

seconds=${1:-5}
out=build-asan/parsers-fuzz
mkdir -p "$out"
cxx=${CXX:-g++}
# name:the native/src files it needs (comma-separated, without .cc/.h)
for target in kmsg:kmsg,reader_thread cgroup:cgroup_stats; do
  name=${target%%:*}
  IFS=, read -ra srcs <<<"${target##*:}"
  bin="$out/${name}_fuzz"
  cc=("$PWD/native/fuzz/${name}_fuzz.cc")
  deps=("native/fuzz/${name}_fuzz.cc" native/fuzz/fuzz_driver.h "$0")
  for s in "${srcs[@]}"; do
    cc+=("$PWD/native/src/$s.cc")
    deps+=("native/src/$s.cc" "native/src/$s.h")
  done
  if [ ! -x "$bin" ] || [ -n "$(find "${deps[@]}" -newer "$bin" 2>/dev/null)" ]; then
    $cxx -std=c++17 -O1 -g -fno-omit-frame-pointer -fno-exceptions -Wall -Wextra -pthread \
      -fsanitize=address,undefined -fno-sanitize-recover=all \
      -o "$bin" "${cc[@]}" >"$out/$name-build.log" 2>&1 \
      || { cat "$out/$name-build.log" >&2; rm -f "$bin"; die "$name: build failed"; }
  fi
  log=$(mktemp)
  (cd "$out" && ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:abort_on_error=0:exitcode=86" \
    UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1" "./${name}_fuzz" --seconds "$seconds") 2>&1 | tee "$log"
  status=${PIPESTATUS[0]}
  if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:|SUMMARY: |CHECK FAILED' "$log"; then
    rm -f "$log"; die "$name: failure reported (see above); input saved under $out/"
  fi
  rm -f "$log"
  [ "$status" -eq 0 ] || die "${name}_fuzz exited with $status"
done
echo "fuzz-parsers: OK"
