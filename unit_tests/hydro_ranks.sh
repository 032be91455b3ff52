#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# korch-hydro on 1 to 4 MPI ranks gives bitwise the same state: for each problem (2-D and 3-D,
# periodic and outflow) and each configuration, for the planner's plan (--plan) and conduction, the
# "state hash" and "totals" lines of runs with -np 2, 3 and 4 must equal those of -np 1, and the
# same grid in smaller blocks must give the same state hash. Then a throwing action on rank 1 must
# stop every rank within 10 s with a non-zero exit and an error naming the rank, the block and the
# action.
#
#   hydro_ranks.sh MPIEXEC PATH/TO/korch-hydro
set -euo pipefail

mpiexec=${1:?usage: hydro_ranks.sh MPIEXEC PATH/TO/korch-hydro}
hydro=${2:?usage: hydro_ranks.sh MPIEXEC PATH/TO/korch-hydro}
dir=$(mktemp -d "${TMPDIR:-/tmp}/korch-hydro-ranks.XXXXXX")
trap 'rm -rf "$dir"' EXIT
failures=0

# run NP ARGS...: the summary's hash and totals lines
run() {
  local np=$1
  shift
  timeout 120 "$mpiexec" -n "$np" "$hydro" --quiet --threads 1 --out "$dir/out" "$@" > "$dir/log" 2>&1 || {
    echo "FAIL: -np $np $*: exit $?" >&2
    cat "$dir/log" >&2
    return 1
  }
  grep -E "state hash|totals" "$dir/log"
  # Periodic problems conserve mass and energy on every rank count.
  if grep -q -- "--boundary periodic\|--problem wave" <<< "$*"; then
    awk '/relative change since step 0/ {
      m = $7; e = $9; gsub(",", "", m)
      if (m + 0 > 1e-12 || e + 0 > 1e-12) { print "FAIL: not conserved: " $0 > "/dev/stderr"; exit 1 }
    }' "$dir/log" || return 1
  fi
}

check() {
  local reference
  reference=$(run 1 "$@") || { failures=$((failures + 1)); return; }
  for np in 2 3 4; do
    local got
    got=$(run "$np" "$@") || { failures=$((failures + 1)); continue; }
    if [[ $got != "$reference" ]]; then
      echo "FAIL: -np $np $* differs from one rank:" >&2
      diff <(echo "$reference") <(echo "$got") >&2 || true
      failures=$((failures + 1))
    fi
  done
  echo "ok: $* (-np 1..4: $(grep -o 'state hash: .*' <<< "$reference"))"
}

check --problem sedov --blocks 4 --cells-per-block 16 --steps 12
check --problem sedov --blocks 4 --cells-per-block 16 --steps 6 --config device
check --problem sedov --blocks 4 --cells-per-block 16 --steps 6 --config split
check --problem sedov --blocks 4 --cells-per-block 16 --steps 6 --config action-parallel --tile 8
check --problem sod-x --blocks 4 --cells-per-block 8 --steps 10
check --problem sod-y --blocks 4 --cells-per-block 8 --steps 10
check --problem wave --blocks 4 --cells-per-block 8 --steps 10
check --problem sod-z --dim 3 --blocks 2 --cells-per-block 8 --steps 5
check --problem wave --dim 3 --blocks 2 --cells-per-block 8 --steps 5
check --problem sedov --dim 3 --blocks 2 --cells-per-block 8 --steps 5 --boundary periodic
# The step run from the planner's plan: the hand-bundled bits, on every rank count.
check --problem sedov --blocks 4 --cells-per-block 16 --steps 12 --plan
check --problem wave --dim 3 --blocks 2 --cells-per-block 8 --steps 5 --plan
if [[ $(run 1 --problem sedov --blocks 4 --cells-per-block 16 --steps 12 --plan) != \
      $(run 1 --problem sedov --blocks 4 --cells-per-block 16 --steps 12) ]]; then
  echo "FAIL: --plan differs from the hand-bundled step" >&2
  failures=$((failures + 1))
fi
# The same grid in smaller blocks on 3 ranks: the same state hash (the hash does not depend on the
# blocks' size; the totals, sums per block, may differ in their last bits).
hash_of() { grep -o 'state hash: .*' <<< "$1" || echo "no state hash"; }
if [[ $(hash_of "$(run 3 --problem sedov --blocks 8 --cells-per-block 8 --steps 12 --config split)") != \
      $(hash_of "$(run 1 --problem sedov --blocks 4 --cells-per-block 16 --steps 12)") ]]; then
  echo "FAIL: 8^2 blocks of 8^2 on 3 ranks differ from 4^2 blocks of 16^2 on one" >&2
  failures=$((failures + 1))
fi
# Conduction: every rank solves the whole system it gathered, so the bits are one rank's (builds
# with Kokkos Kernels; the uniform grid and the adaptive mesh).
if "$hydro" --quiet --threads 1 --out "$dir/out" --blocks 2 --cells-per-block 8 --steps 1 --conduction 0.1 \
    > /dev/null 2>&1; then
  check --problem sedov --blocks 4 --cells-per-block 16 --steps 6 --conduction 0.05
  check --problem sedov --blocks 2 --cells-per-block 16 --steps 6 --max-level 2 --regrid-every 2 --conduction 0.05
fi

# expect_stop WHAT ARGS...: korch-hydro on 2 ranks with ARGS (an injected failure) must fail within
# 10 s, its error naming every word of the array `words`.
expect_stop() {
  local what=$1 start took word
  shift
  start=$(date +%s)
  if timeout 60 "$mpiexec" -n 2 "$hydro" --quiet --threads 1 --out "$dir/out" "$@" > "$dir/log" 2>&1; then
    echo "FAIL: a throwing action on $what exited 0" >&2
    failures=$((failures + 1))
    return
  fi
  took=$(($(date +%s) - start))
  if ((took > 10)); then
    echo "FAIL: the ranks took ${took} s to stop after a throwing action on $what" >&2
    failures=$((failures + 1))
  fi
  for word in "${words[@]}"; do
    if ! grep -q "$word" "$dir/log"; then
      echo "FAIL: the error does not name '$word':" >&2
      cat "$dir/log" >&2
      failures=$((failures + 1))
    fi
  done
  echo "ok: a throwing action on $what stopped both ranks in ${took} s: $(grep -m1 'rank 1 of 2' "$dir/log")"
}
# Block 8 (x = 0, y = 2 of 4 x 4) is on rank 1 of 2: the first half of the Morton curve is y < 2.
words=("rank 1 of 2" "block 8" "hydro" "injected failure")
expect_stop "rank 1" --blocks 4 --cells-per-block 16 --steps 5 --inject-failure 8
# The same on an adaptive mesh: its last leaf along the Morton curve is rank 1's.
words=("rank 1 of 2" "leaf 27 of the Morton curve" "hydro" "injected failure")
expect_stop "rank 1's leaf" --max-level 2 --blocks 2 --cells-per-block 16 --steps 5 --inject-failure 27
((failures == 0)) || { echo "$failures failure(s)" >&2; exit 1; }
