#!/usr/bin/env bash
# The release gate: a fixed set of short torture runs, each with the exit
# status the literature predicts (0 = every verdict valid, 1 = a safety
# violation). Exits non-zero when any run contradicts its expectation:
# a violation where the lock's assumptions hold (a false alarm or a real
# bug), or none where one is expected (the harness lost its power).
set -u
bin=${1:-bin/torture}
out=${OUT:-results/runs/gate}
dur=${DURATION:-10s}
fail=0
check() {
  want=$1; shift
  "$bin" run --out "$out" --duration "$dur" "$@"
  got=$?
  if [ "$got" -ne "$want" ]; then
    echo "GATE FAIL: torture run $* exited $got, expected $want" >&2
    fail=1
  else
    echo "gate ok: torture run $* → $got (expected $want)" >&2
  fi
}
for seed in 1 2 3; do
  check 0 --lock setnx --seed "$seed"
  check 0 --lock redlock --nodes 5 --seed "$seed"
  check 1 --lock setnx-get-set --seed "$seed"
  check 1 --lock redlock-no-quorum --nodes 5 --seed "$seed"
done
if [ "$fail" -ne 0 ]; then
  echo "torture gate: FAILED" >&2
  exit 1
fi
echo "torture gate: passed" >&2
