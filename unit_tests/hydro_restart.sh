#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# korch-hydro's checkpoints: a run killed (SIGKILL) after a checkpoint and restarted from it ends
# with the same state hash as the uninterrupted run, for each configuration; SIGTERM writes a final
# checkpoint and exits 143, and continuing from it is bitwise the uninterrupted run; with MPI, a
# checkpoint of one rank continues on two ranks and one of two ranks on one, bitwise the same; an
# adaptive run's checkpoint holds its mesh and continues bitwise on one or two ranks; a
# checkpoint already at --steps or past --tmax, a FIFO, /dev/zero and a flipped bit are usage errors
# (exit 2, at once) naming the option or field, and leave the outputs as they were.
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
hash_of() { grep -o 'state hash:\? [0-9a-f]*' "$1" || echo "no hash in $1"; }
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

# An adaptive run: SIGTERM writes a checkpoint of its mesh and state and exits 143; continuing from
# it (on one rank, and on two with MPI) is bitwise the uninterrupted run, regrids included.
amr=(--max-level 2 --blocks 4 --cells-per-block 8 --regrid-every 2 --quiet)
"$hydro" "${amr[@]}" --steps 1000000 --out "$dir/amr" > "$dir/amr.log" 2>&1 &
pid=$!
sleep 1.5
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
if ((rc != 143)); then
  fail "SIGTERM, adaptive run: exit $rc, not 143"
  cat "$dir/amr.log" >&2
elif ! grep -q "stopped by signal 15 after step .*checkpoint written" "$dir/amr.log"; then
  fail "SIGTERM, adaptive run: no message naming the signal, the step and the checkpoint: $(cat "$dir/amr.log")"
else
  saved=$(checkpoint_steps "$dir/amr/checkpoint.bin")
  end=$((saved + 5))
  "$hydro" "${amr[@]}" --steps "$end" --out "$dir/amr-full" > "$dir/amr-full.log"
  runs=("$hydro")
  [[ -n $mpiexec ]] && runs+=("$mpiexec -n 2 $hydro --threads 1")
  for run in "${runs[@]}"; do
    # shellcheck disable=SC2086  # the MPI launcher's words
    $run "${amr[@]}" --steps "$end" --restart "$dir/amr/checkpoint.bin" --out "$dir/amr-cont" > "$dir/amr-cont.log" 2>&1
    if [[ $(hash_of "$dir/amr-full.log") != "$(hash_of "$dir/amr-cont.log")" ]]; then
      fail "adaptive checkpoint at step $saved ($run): continued $(hash_of "$dir/amr-cont.log"), uninterrupted $(hash_of "$dir/amr-full.log")"
    else
      echo "ok: adaptive run: SIGTERM at step $saved wrote a checkpoint; continued ($run) to step $end bitwise"
    fi
  done
fi

# Refusals: exit 2 at once, naming the option or the field, before any output is touched.
# expect_refusal WHAT TEXT ARGS...: korch-hydro ARGS exits 2 within 20 s and its error holds TEXT
expect_refusal() {
  local what=$1 text=$2 rc=0
  shift 2
  timeout 20 "$hydro" "$@" > "$dir/refused.log" 2>&1 || rc=$?
  if ((rc != 2)); then
    fail "$what: exit $rc, not 2"
  elif ! grep -qF -- "$text" "$dir/refused.log"; then
    fail "$what: the error does not say '$text': $(cat "$dir/refused.log")"
  else
    echo "ok: $what: $(head -n 1 "$dir/refused.log")"
  fi
}
small=(--blocks 1 --cells-per-block 4 --quiet)
"$hydro" "${small[@]}" --steps 3 --checkpoint-every 3 --out "$dir/done" > /dev/null
outputs() { (cd "$dir/done" && ls -l --time-style=full-iso && md5sum ./*); }
before=$(outputs)
expect_refusal "a restart at --steps" "option --steps: 3, but checkpoint '$dir/done/checkpoint.bin' is at step 3" \
  "${small[@]}" --steps 3 --restart "$dir/done/checkpoint.bin" --out "$dir/done"
expect_refusal "a restart past --tmax" "option --tmax: 0.001, but checkpoint '$dir/done/checkpoint.bin' is at t = " \
  "${small[@]}" --tmax 0.001 --restart "$dir/done/checkpoint.bin" --out "$dir/done"
[[ $(outputs) == "$before" ]] || fail "a refused restart changed the outputs in $dir/done"
mkfifo "$dir/fifo"
expect_refusal "a FIFO" "option --restart: '$dir/fifo' is a FIFO" "${small[@]}" --steps 6 --restart "$dir/fifo" --out "$dir/x"
expect_refusal "/dev/zero" "option --restart: '/dev/zero' is a character device" "${small[@]}" --steps 6 --restart /dev/zero \
  --out "$dir/x"
cp "$dir/done/checkpoint.bin" "$dir/flipped.bin"
size=$(stat -c %s "$dir/flipped.bin")
last=$(tail -c 1 "$dir/flipped.bin" | od -An -tu1 | tr -d ' ')
printf "$(printf '\\%03o' $((last ^ 1)))" | dd of="$dir/flipped.bin" bs=1 seek=$((size - 1)) conv=notrunc status=none
expect_refusal "a flipped bit" "checkpoint '$dir/flipped.bin': field 'checksum'" "${small[@]}" --steps 6 \
  --restart "$dir/flipped.bin" --out "$dir/x"

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
