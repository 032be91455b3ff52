#!/usr/bin/env bash
# korch-hydro's checkpoints: a run killed (SIGKILL) after a checkpoint and restarted from it ends
# with the same state hash as the uninterrupted run, for each configuration; SIGTERM writes a final
# checkpoint and exits 143, and continuing from it is bitwise the uninterrupted run; with MPI, a
# checkpoint of one rank continues on two ranks and one of two ranks on one, bitwise the same.
#
#   hydro_restart.sh PATH/TO/korch-hydro [MPIEXEC]
set -euo pipefail

hydro=${1:?usage: hydro_restart.sh PATH/TO/korch-hydro [MPIEXEC]}
mpiexec=${2:-}
dir=$(mktemp -d "${TMPDIR:-/tmp}/korch-hydro-restart.XXXXXX")
trap 'kill -9 $(jobs -p) 2> /dev/null || true; rm -rf "$dir"' EXIT
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} OMP_PROC_BIND=false OMP_WAIT_POLICY=passive
failures=0
grid=(--blocks 4 --cells-per-block 16 --quiet)

fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}
hash_of() { grep -o 'state hash: [0-9a-f]*' "$1" || echo "no hash in $1"; }
# checkpoint_steps FILE: the step count in a checkpoint's header
checkpoint_steps() { grep -a -m1 '^steps ' "$1" | cut -d' ' -f2; }
# wait_for_checkpoint FILE PID: until FILE exists (or PID ends)
wait_for_checkpoint() {
  for _ in $(seq 1 600); do
    [[ -f $1 ]] && return 0
    kill -0 "$2" 2> /dev/null || return 1
    sleep 0.05
  done
  return 1
}

for config in cpu device split action-parallel; do
  # A run far longer than the test, killed once its first checkpoint is there.
  "$hydro" "${grid[@]}" --config "$config" --steps 100000 --checkpoint-every 4 --out "$dir/killed" > /dev/null 2>&1 &
  pid=$!
  if ! wait_for_checkpoint "$dir/killed/checkpoint.bin" "$pid"; then
    fail "$config: no checkpoint appeared"
    continue
  fi
  kill -9 "$pid" 2> /dev/null || true
  wait "$pid" 2> /dev/null || true
  saved=$(checkpoint_steps "$dir/killed/checkpoint.bin")
  end=$((saved + 12))
  "$hydro" "${grid[@]}" --config "$config" --steps "$end" --out "$dir/full" > "$dir/full.log"
  "$hydro" "${grid[@]}" --config "$config" --steps "$end" --restart "$dir/killed/checkpoint.bin" --out "$dir/restarted" > "$dir/restarted.log"
  if [[ $(hash_of "$dir/full.log") != "$(hash_of "$dir/restarted.log")" ]]; then
    fail "$config: restarted from step $saved: $(hash_of "$dir/restarted.log"), uninterrupted: $(hash_of "$dir/full.log")"
  else
    echo "ok: $config killed after step $saved, restarted, step $end bitwise: $(hash_of "$dir/full.log")"
  fi
  rm -rf "$dir/killed" "$dir/restarted" "$dir/full"
done

# SIGTERM: a final checkpoint, exit 143, and the continuation is the uninterrupted run.
"$hydro" "${grid[@]}" --steps 100000 --out "$dir/term" > "$dir/term.log" 2>&1 &
pid=$!
sleep 1.5
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
if ((rc != 143)); then
  fail "SIGTERM: exit $rc, not 143"
  cat "$dir/term.log" >&2
elif [[ ! -f $dir/term/checkpoint.bin ]]; then
  fail "SIGTERM: no final checkpoint"
else
  saved=$(checkpoint_steps "$dir/term/checkpoint.bin")
  end=$((saved + 5))
  "$hydro" "${grid[@]}" --steps "$end" --out "$dir/full" > "$dir/full.log"
  "$hydro" "${grid[@]}" --steps "$end" --restart "$dir/term/checkpoint.bin" --out "$dir/cont" > "$dir/cont.log"
  if [[ $(hash_of "$dir/full.log") != "$(hash_of "$dir/cont.log")" ]]; then
    fail "SIGTERM at step $saved: continued $(hash_of "$dir/cont.log"), uninterrupted $(hash_of "$dir/full.log")"
  else
    echo "ok: SIGTERM at step $saved wrote a checkpoint and exited 143; continued to step $end bitwise"
  fi
fi

if [[ -n $mpiexec ]]; then
  "$hydro" "${grid[@]}" --steps 30 --out "$dir/full" > "$dir/full.log"
  "$hydro" "${grid[@]}" --steps 15 --checkpoint-every 15 --out "$dir/one" > /dev/null
  "$mpiexec" -n 2 "$hydro" "${grid[@]}" --threads 1 --steps 30 --restart "$dir/one/checkpoint.bin" --out "$dir/two" > "$dir/two.log" 2>&1
  "$mpiexec" -n 2 "$hydro" "${grid[@]}" --threads 1 --steps 15 --checkpoint-every 15 --out "$dir/two-saved" > /dev/null 2>&1
  "$hydro" "${grid[@]}" --steps 30 --restart "$dir/two-saved/checkpoint.bin" --out "$dir/back" > "$dir/back.log"
  for log in two back; do
    if [[ $(hash_of "$dir/full.log") != "$(hash_of "$dir/$log.log")" ]]; then
      fail "ranks: $log: $(hash_of "$dir/$log.log"), uninterrupted $(hash_of "$dir/full.log")"
      cat "$dir/$log.log" >&2
    fi
  done
  echo "ok: checkpoints move between 1 and 2 ranks bitwise"
fi
((failures == 0)) || { echo "$failures failure(s)" >&2; exit 1; }
