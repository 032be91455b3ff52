#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Ranks given different options stop, all of them, at once: for every option that shapes a
# korch-hydro run, an MPMD launch (mpiexec -n 1 korch-hydro A : -n 1 korch-hydro B) must exit
# non-zero within 20 s with an error naming the option and both ranks' values. A rank whose command
# line is refused stops the other one too; options that only place work on a rank may differ.
#
#   hydro_rank_options.sh MPIEXEC PATH/TO/korch-hydro
set -euo pipefail

mpiexec=${1:?usage: hydro_rank_options.sh MPIEXEC PATH/TO/korch-hydro}
hydro=${2:?usage: hydro_rank_options.sh MPIEXEC PATH/TO/korch-hydro}
dir=$(mktemp -d "${TMPDIR:-/tmp}/korch-hydro-rank-options.XXXXXX")
trap 'rm -rf "$dir"' EXIT
failures=0
base=(--quiet)

# launch "ARGS OF RANK 0" "ARGS OF RANK 1": exit status of the MPMD run, its output in $dir/log
launch() {
  local a b
  read -r -a a <<< "$1"
  read -r -a b <<< "$2"
  local rc=0
  timeout 20 "$mpiexec" -n 1 "$hydro" "${base[@]}" "${a[@]}" : -n 1 "$hydro" "${base[@]}" "${b[@]}" > "$dir/log" 2>&1 || rc=$?
  return $rc
}

# differ OPTION "ARGS OF RANK 0" "ARGS OF RANK 1" VALUE0 VALUE1
differ() {
  local option=$1 rc=0
  launch "$2" "$3" || rc=$?
  if ((rc == 0 || rc == 124)); then
    echo "FAIL: $option: rank 0 '$2', rank 1 '$3': exit $rc (0: ran a mixed state; 124: hung)" >&2
    cat "$dir/log" >&2
    failures=$((failures + 1))
    return
  fi
  for word in "option $option:" "$4 on rank 0" "$5 on rank 1"; do
    if ! grep -qF -- "$word" "$dir/log"; then
      echo "FAIL: $option: the error does not say '$word':" >&2
      cat "$dir/log" >&2
      failures=$((failures + 1))
      return
    fi
  done
  echo "ok: $option differs: exit $rc, $(grep -m1 -o "option $option: [^;)]*" "$dir/log")"
}

out="--steps 2 --out $dir/o"
differ --config "$out --config cpu" "$out --config split" cpu_only cpu_gpu_data_parallel
differ --problem "$out" "$out --problem sod-x" sedov sod-x
differ --dim "$out --problem wave" "$out --problem wave --dim 3" 2 3
differ --blocks "$out --blocks 2" "$out --blocks 3" 2 3
differ --cells-per-block "$out --cells-per-block 8" "$out --cells-per-block 10" 8 10
differ --boundary "$out --boundary outflow" "$out --boundary periodic" outflow periodic
differ --limiter "$out" "$out --limiter minmod" mc minmod
differ --cfl "$out" "$out --cfl 0.3" 0.40000000000000002 0.29999999999999999
differ --conduction "$out" "$out --conduction 0.5" "(not given)" 0.5
differ --steps "--steps 10 --out $dir/o" "--steps 20 --out $dir/o" 10 20
differ --tmax "--tmax 0.01 --out $dir/o" "--tmax 0.02 --out $dir/o" 0.01 0.02
differ --steps "--steps 10 --out $dir/o" "--out $dir/o" 10 "(not given)"
differ --plan/--operation "$out" "$out --plan" "(not given)" builtin
# Two copies of one checkpoint (of step 2): each rank's file is valid, only its name differs.
"$hydro" --quiet --steps 2 --checkpoint-every 2 --out "$dir/c" > /dev/null
cp "$dir/c/checkpoint.bin" "$dir/a.bin"
cp "$dir/c/checkpoint.bin" "$dir/b.bin"
differ --restart "--steps 4 --out $dir/o --restart $dir/a.bin" "--steps 4 --out $dir/o --restart $dir/b.bin" "$dir/a.bin" "$dir/b.bin"
differ --out "--steps 2 --out $dir/o" "--steps 2 --out $dir/p" "$dir/o" "$dir/p"
differ --checkpoint-every "$out" "$out --checkpoint-every 1" 0 1
differ --log "$out" "$out --log" "(not given)" on
differ --plot-dir "$out --plot-dir $dir/q" "$out" "$dir/q" "(not given)"
differ --plot-prefix "$out --plot-prefix a" "$out --plot-prefix b" a b
if "$hydro" --help | grep -q -- --plot-every && ! "$hydro" --quiet --steps 1 --out "$dir/h" --plot-every 1 2>&1 | grep -q "without HDF5"; then
  differ --plot-every "$out --plot-every 1" "$out --plot-every 2" 1 2
fi

# A command line refused on one rank stops the other rank too.
rc=0
launch "$out" "$out --steps x" || rc=$?
if ((rc == 0 || rc == 124)) || ! grep -q "another rank of this run refused its command line" "$dir/log"; then
  echo "FAIL: a refused command line on rank 1: exit $rc" >&2
  cat "$dir/log" >&2
  failures=$((failures + 1))
else
  echo "ok: a refused command line on rank 1 stops rank 0 (exit $rc)"
fi

# What places the work on a rank may differ: the run goes on.
if launch "$out --threads 2 --tile 8 --host-parallel" "$out --threads 1"; then
  echo "ok: ranks with different --threads/--tile run"
else
  echo "FAIL: ranks that differ only in --tile were stopped:" >&2
  cat "$dir/log" >&2
  failures=$((failures + 1))
fi
((failures == 0)) || { echo "$failures failure(s)" >&2; exit 1; }
