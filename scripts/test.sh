#!/usr/bin/env bash
# README command 2 (and .ci/run): the whole suite (docs/testing.md).
#   1. checks, one test each: imports (scripts/check-imports.mjs: no loops, no upward imports),
#      the shell scripts (shellcheck over scripts/ and .ci/run), e2e-matrix (every e2e file
#      classified in test/e2e/matrix.json); then unit tests, with the addon and KUBELET_TS_NATIVE=0
#   2. native tests under AddressSanitizer + UBSan
#   3. end-to-end tests against a private containerd, per the plan of scripts/e2e-matrix.mjs:
#      runtime tests on 1.6 in both modes, 1.7 and 2.x native; the rest once, on 2.x native
#      (KUBELET_TS_E2E_RUNTIMES="1.6": all on 1.6 only; KUBELET_TS_E2E_FILES="cri daemon": those only)
# `bash scripts/test.sh unit` runs only step 1; `e2e` steps 1's checks and 3; `e2e-plan` prints
# the plan and runs nothing. Prints each leg's time, and "N passed, N failed, in S s" last.
# Logs stay (path printed) on failure.
set -euo pipefail
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO"
WHAT=${1:-all}
case $WHAT in all|unit|e2e|e2e-plan) ;; *) echo "usage: scripts/test.sh [all|unit|e2e|e2e-plan]" >&2; exit 2 ;; esac
E2E_PLAN=(node scripts/e2e-matrix.mjs --runtimes "${KUBELET_TS_E2E_RUNTIMES:-1.6 1.7 2}" --only "${KUBELET_TS_E2E_FILES:-}")
if [[ $WHAT == e2e-plan ]]; then exec "${E2E_PLAN[@]}"; fi
LOG=$(mktemp -d "${TMPDIR:-/tmp}/kubelet-ts-test.XXXXXX")
PASS=0
FAIL=0
STATUS=0
CTR_STATE=""
# An early exit (a failed build) leaves the logs only if something was written.
trap '[[ -z $CTR_STATE ]] || bash scripts/containerd.sh stop --state-dir "$CTR_STATE" >/dev/null 2>&1 || true; rmdir "$LOG" 2>/dev/null || true' EXIT

check() { # name, command...: one test
  local name=$1; shift
  echo "=== $name"
  if "$@"; then PASS=$((PASS + 1)); else FAIL=$((FAIL + 1)); STATUS=1; fi
}

# shellcheck disable=SC2317 # (these two) called through check
e2e_plan() { PLAN=$("${E2E_PLAN[@]}") && awk '{ print $1 " on containerd " $2 ": " NF - 3 " files" }' <<<"$PLAN"; }
# shellcheck disable=SC2317
shellcheck_scripts() {
  command -v shellcheck >/dev/null || { echo "shellcheck is not installed (scripts/install-deps.sh installs it)"; return 1; }
  shellcheck scripts/*.sh .ci/run && echo "shellcheck: scripts/*.sh and .ci/run are clean"
}

run_tests() { # name, env..., -- files...
  local name=$1; shift
  local envs=()
  while [[ $1 != -- ]]; do envs+=("$1"); shift; done
  shift
  echo "=== $name"
  local started=$SECONDS
  # A test that hangs fails after 10 minutes instead of holding CI (tests may set a shorter timeout).
  local times=(--test-reporter=tap --test-reporter-destination=stdout
    --test-reporter=./scripts/file-times-reporter.mjs --test-reporter-destination="$LOG/$name.times")
  if env "${envs[@]}" node --test --test-timeout=600000 "${times[@]}" "$@" >"$LOG/$name.tap" 2>&1; then :; else STATUS=1; fi
  # A log directory removed under the run (a stray cleanup) must fail it, not count nothing.
  if [[ ! -f $LOG/$name.tap ]]; then echo "$LOG/$name.tap is gone: $name counts as failed"; STATUS=1; return; fi
  grep -E '^not ok|^# (tests|pass|fail)' "$LOG/$name.tap" || true
  if grep -q '^not ok' "$LOG/$name.tap"; then grep -B2 -A30 '^not ok' "$LOG/$name.tap" | head -150; fi
  PASS=$((PASS + $(awk '/^# pass/{s+=$3} END{print s+0}' "$LOG/$name.tap")))
  FAIL=$((FAIL + $(awk '/^# fail/{s+=$3} END{print s+0}' "$LOG/$name.tap")))
  if [[ -s $LOG/$name.times ]]; then echo "slowest files of $name:"; head -5 "$LOG/$name.times"; fi
  echo "$name took $((SECONDS - started)) s"
}

if [[ $WHAT != unit ]]; then bash scripts/install-deps.sh; fi
if [[ ! -d node_modules ]]; then npm ci --no-audit --no-fund; fi
# A clean dist/: a moved or deleted source must not leave its old test behind to run.
rm -rf dist
npm run build --silent

check imports node scripts/check-imports.mjs
check shellcheck shellcheck_scripts
PLAN=""
check e2e-matrix e2e_plan
# Hygiene: ESLint (eslint.config.js), prettier (prettier.config.js, .prettierignore), commit
# messages after the rule's base commit (scripts/check-commits.mjs).
check lint npm run --silent lint
check format npm run --silent format:check
check commits node scripts/check-commits.mjs

if [[ $WHAT != e2e ]]; then
  mapfile -t UNIT < <(find dist/test -name '*.test.js' -not -path 'dist/test/e2e/*' | sort)
  # The slowest files first (their times are in each leg's .times file): three at a time, a
  # 60-second file started last would hold the whole leg on its own.
  SLOW=(scripts/install-tarball certificate/agent-bootstrap certificate/rotation server/main-server
    util/open-beneath native/pleg-diff fswatch/fs-watcher.contract volume/subpath/subpath)
  FIRST=()
  for s in "${SLOW[@]}"; do
    f=dist/test/$s.test.js
    if [[ " ${UNIT[*]} " == *" $f "* ]]; then FIRST+=("$f"); continue; fi
    echo "scripts/test.sh: SLOW names $s, which is gone: update the list"
    STATUS=1
  done
  mapfile -t REST < <(printf '%s\n' "${UNIT[@]}" | grep -vxF -f <(printf '%s\n' "${FIRST[@]}"))
  UNIT=("${FIRST[@]}" "${REST[@]}")
  # Three files at a time: most unit files wait on timers and sockets, not the CPU (node's
  # default on 2 cores is one at a time). The files share no fixed ports, paths or cgroups.
  run_tests unit-native KUBELET_TS_NATIVE=1 -- --test-concurrency=3 "${UNIT[@]}"
  run_tests unit-ts KUBELET_TS_NATIVE=0 -- --test-concurrency=3 "${UNIT[@]}"
fi

if [[ $WHAT == all ]]; then
  if [[ -x scripts/test-native-asan.sh || -f scripts/test-native-asan.sh ]]; then
    echo "=== native-asan"
    started=$SECONDS
    if KUBELET_TS_DIST_BUILT=1 bash scripts/test-native-asan.sh >"$LOG/asan.tap" 2>&1; then :; else STATUS=1; tail -40 "$LOG/asan.tap"; fi
    grep -E '^# (pass|fail)' "$LOG/asan.tap" || true
    PASS=$((PASS + $(awk '/^# pass/{s+=$3} END{print s+0}' "$LOG/asan.tap")))
    FAIL=$((FAIL + $(awk '/^# fail/{s+=$3} END{print s+0}' "$LOG/asan.tap")))
    echo "native-asan took $((SECONDS - started)) s"
  fi
fi
if [[ $WHAT == all || $WHAT == e2e ]]; then
  # The plan's legs (scripts/e2e-matrix.mjs), grouped by release: a fresh daemon for each.
  CTR_STATE="$REPO/.state/test-containerd"
  running="" ENDPOINT=""
  while read -r -u 3 leg version native files; do
    [[ -n $leg ]] || continue
    if [[ $version != "$running" ]]; then
      running=$version
      bash scripts/containerd.sh stop --state-dir "$CTR_STATE" >/dev/null 2>&1 || true
      if ! ENDPOINT=$(bash scripts/containerd.sh start --version "$version" --state-dir "$CTR_STATE"); then
        echo "=== e2e on containerd $version: the daemon did not start"; STATUS=1; ENDPOINT=""
      fi
    fi
    [[ -n $ENDPOINT ]] || continue
    read -ra names <<<"$files"
    run_tests "$leg" KUBELET_TS_NATIVE="$native" KUBELET_TS_TEST_CRI_ENDPOINT="$ENDPOINT" KUBELET_TS_CTR_VERSION="$version" -- --test-concurrency=1 "${names[@]/#/dist/test/e2e/}"
  done 3<<<"$PLAN"
fi

[[ $FAIL -eq 0 ]] || STATUS=1
if [[ $STATUS -eq 0 ]]; then rm -rf "$LOG"; elif ! rmdir "$LOG" 2>/dev/null; then echo "logs: $LOG"; fi
echo "tests: $PASS passed, $FAIL failed, in $SECONDS s"
exit $STATUS
