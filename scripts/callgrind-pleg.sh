#!/usr/bin/env bash
# Instructions per PLEG relist diff (RelistDiffer::Diff, native/src/pleg.cc) at each size, counted
# by callgrind over the bench's replies (bench/pleg-replies.ts) in steady state: the driver
# (native/bench/pleg_diff_driver.cc) runs one full diff and 20 warm-up diffs uninstrumented, then
# 30 diffs instrumented. Deterministic, unlike wall clock on a shared machine. Also prints the
# driver's own timings and output checksum without valgrind (equal checksums between two builds:
# the same output byte for byte).
#   bash scripts/callgrind-pleg.sh [sizes...]        default: 100 1000 10000 50000
# Builds with the addon's flags (-O2) into .state/pleg-prof/; needs valgrind and a compiled dist/.
set -euo pipefail
cd "$(dirname "$0")/.."

sizes=("$@")
[ ${#sizes[@]} -eq 0 ] && sizes=(100 1000 10000 50000)
out=.state/pleg-prof
mkdir -p "$out"
command -v valgrind >/dev/null || { echo "callgrind-pleg: valgrind not installed" >&2; exit 1; }
[ -f dist/bench/pleg-replies.js ] || { echo "callgrind-pleg: run npx tsc -p tsconfig.json first" >&2; exit 1; }

bin="$out/pleg_diff_driver"
${CXX:-g++} -std=c++17 -O2 -fno-exceptions -Wall -Wextra -o "$bin" native/bench/pleg_diff_driver.cc native/src/pleg*.cc
node dist/bench/pleg-replies.js "$out" "${sizes[@]}"
for n in "${sizes[@]}"; do
  ir=$(valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$out/callgrind.$n" \
         --toggle-collect='kts::pleg::RelistDiffer::Diff*' "$bin" "$out" "$n" 30 2>&1 | awk '/Collected/ {print $4}')
  echo "containers $n: $((ir / 30)) instructions per diff (callgrind, 30 diffs); $("$bin" "$out" "$n" 300)"
done
