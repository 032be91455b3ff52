#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# korch-hydro on ranks and threads, against the plain Kokkos loop and (optionally) an older build,
# all measured in one run with the variants alternated round by round (docs/ranks.md):
#   plain      korch-bench-hydro's plain-kokkos step (2 OpenMP threads: update loop, serial guard
#              fill and CFL reduction), 2D Sedov 384^2 (6^2 blocks of 64^2)
#   1x2        korch-hydro, one process, 2 team threads (the main job's configuration)
#   2x1        mpirun -np 2 korch-hydro, 1 team thread per rank
#   old        OLD_KORCH_HYDRO, one process, 2 team threads (with --old)
# Prints per variant the median cell updates/s and the share of step time outside
# Runtime::execute, the ratios, and the share of guard-cell message time that tasks overlapped for
# 2 ranks on 512^2 (8^2 blocks of 64^2). Load averages before and after.
#
#   bench/bench_ranks.sh [--rounds N] [--steps N] [--old OLD_KORCH_HYDRO] BUILD_DIR
#   (BUILD_DIR: an openmp build with MPI, e.g. build/openmp)
set -euo pipefail

usage() { sed -n '3,15p' "$0" | sed 's/^# \{0,1\}//'; }
rounds=5
steps=200
old=""
build=""
while (($#)); do
  case "$1" in
    --rounds) rounds=${2:?--rounds needs a number}; shift 2 ;;
    --steps) steps=${2:?--steps needs a number}; shift 2 ;;
    --old) old=${2:?--old needs a korch-hydro}; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "bench_ranks.sh: unknown option '$1'" >&2; usage >&2; exit 2 ;;
    *) [[ -z $build ]] || { echo "bench_ranks.sh: one BUILD_DIR, not '$1' too" >&2; exit 2; }; build=$1; shift ;;
  esac
done
[[ -n $build ]] || { usage >&2; exit 2; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "bench_ranks.sh: --rounds $rounds: use a positive integer" >&2; exit 2; }
[[ $steps =~ ^[1-9][0-9]*$ ]] || { echo "bench_ranks.sh: --steps $steps: use a positive integer" >&2; exit 2; }
hydro=$build/apps/hydro/korch-hydro
plain=$build/bench/korch-bench-hydro
for p in "$hydro" "$plain" ${old:+"$old"}; do
  [[ -x $p ]] || { echo "bench_ranks.sh: $p is not an executable: build it first" >&2; exit 2; }
done
command -v mpirun > /dev/null || { echo "bench_ranks.sh: mpirun not found: install openmpi-bin" >&2; exit 2; }
export OMP_PROC_BIND=false OMP_WAIT_POLICY=passive OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
  OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
tmp=$(mktemp -d "${TMPDIR:-/tmp}/korch-bench-ranks.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
problem=(--blocks 6 --cells-per-block 64 --steps "$steps" --quiet --out "$tmp/out")
cells=$((384 * 384))

declare -A rate outside
# field LOG LABEL: the number after a summary label
field() { grep -E "^ *$2" "$1" | head -n1 | grep -oE '[0-9.]+(e[-+][0-9]+)?%?' | head -n1 | tr -d '%'; }
record() { rate[$1]+="$2 "; outside[$1]+="$3 "; }

echo "bench_ranks: 2D Sedov 384^2, $steps steps, $rounds rounds; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 1; r <= rounds; ++r)); do
  OMP_NUM_THREADS=2 "$plain" 2 64 6 "$((steps < 30 ? steps : 30))" > "$tmp/plain" 2>&1  # a median of step times
  step_ms=$(grep -E '^ *plain-kokkos' "$tmp/plain" | awk '{print $9}')  # the step median [ms] column
  record plain "$(awk -v c=$cells -v ms="$step_ms" 'BEGIN {printf "%.4e", c / (ms / 1000)}')" 0
  OMP_NUM_THREADS=2 "$hydro" "${problem[@]}" --threads 2 > "$tmp/a" 2>&1
  record 1x2 "$(field "$tmp/a" 'cell updates')" "$(awk -v e="$(field "$tmp/a" 'share: runtime execute')" 'BEGIN {print 100 - e}')"
  OMP_NUM_THREADS=1 mpirun -np 2 "$hydro" "${problem[@]}" --threads 1 > "$tmp/b" 2>&1
  record 2x1 "$(field "$tmp/b" 'cell updates')" "$(awk -v e="$(field "$tmp/b" 'share: runtime execute')" 'BEGIN {print 100 - e}')"
  if [[ -n $old ]]; then
    OMP_NUM_THREADS=2 "$old" "${problem[@]}" --threads 2 > "$tmp/o" 2>&1
    record old "$(field "$tmp/o" 'cell updates')" "$(awk -v e="$(field "$tmp/o" 'share: runtime execute')" 'BEGIN {print 100 - e}')"
  fi
done
median() { tr ' ' '\n' <<< "$1" | grep -v '^$' | sort -g | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
printf '  %-8s %16s %26s   %s\n' variant "cells/s (median)" "outside execute (median)" "all rounds (cells/s)"
variants=(plain 1x2 2x1)
[[ -n $old ]] && variants+=(old)
for v in "${variants[@]}"; do
  printf '  %-8s %16.4e %25.1f%%   %s\n' "$v" "$(median "${rate[$v]}")" "$(median "${outside[$v]}")" "${rate[$v]}"
done
ratio() { awk -v a="$(median "${rate[$1]}")" -v b="$(median "${rate[$2]}")" 'BEGIN {printf "%.3f", a / b}'; }
echo "  ratios of median cells/s: 1x2/plain $(ratio 1x2 plain), 2x1/plain $(ratio 2x1 plain), 2x1/1x2 $(ratio 2x1 1x2)${old:+, 1x2/old $(ratio 1x2 old)}"
OMP_NUM_THREADS=1 mpirun -np 2 "$hydro" --blocks 8 --cells-per-block 64 --steps "$steps" --quiet --threads 1 --out "$tmp/out" > "$tmp/c" 2>&1
echo "  2 ranks, 512^2: communication overlapped by tasks $(field "$tmp/c" 'communication overlapped')% (rank 0, traced cycles)"
echo "bench_ranks: load after: $(cut -d' ' -f1-3 /proc/loadavg)"
