#!/usr/bin/env bash
# README command 2 (and .ci/run): the whole suite.
#   1. the import check (scripts/check-imports.mjs: no loops, no upward imports; one test),
#      then unit tests, with the addon and with KUBELET_TS_NATIVE=0
#   2. native tests under AddressSanitizer + UBSan
#   3. end-to-end tests against a private containerd: 1.6 in both modes, then 1.7 and 2.x native
#      (scripts/containerd.sh --version; KUBELET_TS_E2E_RUNTIMES="1.6" for 1.6 only)
# `bash scripts/test.sh unit` runs only step 1. Prints "N passed, N failed" last.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
WHAT=${1:-all}
LOG=$(mktemp -d)
PASS=0
FAIL=0
STATUS=0

run_tests() { # name, env..., -- files...
  local name=$1; shift
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  echo "=== $name"
  # A test that hangs fails after 10 minutes instead of holding CI (tests may set a shorter timeout).
  if env "${envs[@]}" node --test --test-timeout=600000 "$@" >"$LOG/$name.tap" 2>&1; then :; else STATUS=1; fi
  grep -E '^not ok|^# (tests|pass|fail)' "$LOG/$name.tap" || true
  if grep -q '^not ok' "$LOG/$name.tap"; then grep -B2 -A30 '^not ok' "$LOG/$name.tap" | head -150; fi
  PASS=$((PASS + $(awk '/^# pass/{s+=$3} END{print s+0}' "$LOG/$name.tap")))
  FAIL=$((FAIL + $(awk '/^# fail/{s+=$3} END{print s+0}' "$LOG/$name.tap")))
}

if [[ $WHAT != unit ]]; then bash scripts/install-deps.sh; fi
if [[ ! -d node_modules ]]; then npm ci --no-audit --no-fund; fi
# A clean dist/: a moved or deleted source must not leave its old test behind to run.
rm -rf dist
npm run build --silent

echo "=== imports"
if node scripts/check-imports.mjs; then PASS=$((PASS + 1)); else FAIL=$((FAIL + 1)); STATUS=1; fi
# Hygiene, one test each: ESLint (eslint.config.js), prettier (prettier.config.js, .prettierignore),
# commit messages after the rule's base commit (scripts/check-commits.mjs).
for check in lint format:check; do
  echo "=== $check"
  if npm run --silent "$check"; then PASS=$((PASS + 1)); else FAIL=$((FAIL + 1)); STATUS=1; fi
done
echo "=== commits"
if node scripts/check-commits.mjs; then PASS=$((PASS + 1)); else FAIL=$((FAIL + 1)); STATUS=1; fi

mapfile -t UNIT < <(find dist/test -name '*.test.js' -not -path 'dist/test/e2e/*' | sort)
run_tests unit-native KUBELET_TS_NATIVE=1 -- "${UNIT[@]}"
run_tests unit-ts KUBELET_TS_NATIVE=0 -- "${UNIT[@]}"

if [[ $WHAT != unit ]]; then
  if [[ -x scripts/test-native-asan.sh || -f scripts/test-native-asan.sh ]]; then
    echo "=== native-asan"
    if bash scripts/test-native-asan.sh >"$LOG/asan.tap" 2>&1; then :; else STATUS=1; tail -40 "$LOG/asan.tap"; fi
    grep -E '^# (pass|fail)' "$LOG/asan.tap" || true
    PASS=$((PASS + $(awk '/^# pass/{s+=$3} END{print s+0}' "$LOG/asan.tap")))
    FAIL=$((FAIL + $(awk '/^# fail/{s+=$3} END{print s+0}' "$LOG/asan.tap")))
  fi
  CTR_STATE="$REPO/.state/test-containerd"
  trap 'bash scripts/containerd.sh stop --state-dir "$CTR_STATE" >/dev/null 2>&1 || true' EXIT
  mapfile -t E2E < <(find dist/test/e2e -name '*.test.js' | sort)
  # The runtimes users run (scripts/containerd.sh --version): containerd 1.6 (bookworm's) in both
  # modes, 1.7 (trixie's) and 2.x (sid's) in native mode. Each release gets a fresh daemon.
  # KUBELET_TS_E2E_RUNTIMES narrows the list (e.g. "1.6").
  for version in ${KUBELET_TS_E2E_RUNTIMES:-1.6 1.7 2}; do
    bash scripts/containerd.sh stop --state-dir "$CTR_STATE" >/dev/null 2>&1 || true
    if ! ENDPOINT=$(bash scripts/containerd.sh start --version "$version" --state-dir "$CTR_STATE"); then
      echo "=== e2e on containerd $version: the daemon did not start"; STATUS=1; continue
    fi
    suffix=""; [[ $version == 1.6 ]] || suffix="-containerd-$version"
    run_tests "e2e-native$suffix" KUBELET_TS_NATIVE=1 KUBELET_TS_TEST_CRI_ENDPOINT="$ENDPOINT" KUBELET_TS_CTR_VERSION="$version" -- --test-concurrency=1 "${E2E[@]}"
    if [[ $version == 1.6 ]]; then
      run_tests e2e-ts KUBELET_TS_NATIVE=0 KUBELET_TS_TEST_CRI_ENDPOINT="$ENDPOINT" KUBELET_TS_CTR_VERSION="$version" -- --test-concurrency=1 "${E2E[@]}"
    fi
  done
fi

[[ $FAIL -eq 0 ]] || STATUS=1
echo "tests: $PASS passed, $FAIL failed"
exit $STATUS
