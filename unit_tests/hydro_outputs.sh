#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# korch-hydro's outputs survive a killed run: one complete run into a directory, then repeated
# smaller runs into the same directory killed with SIGKILL at random moments (while stepping and
# while writing outputs). After each kill every output must be the old complete file or a new
# complete one: PNGs end with the IEND chunk, trace.json is complete JSON, nothing is empty, and
# the only other files are temporaries (.NAME.korch-tmp-PID), which are not outputs.
#
#   hydro_outputs.sh PATH/TO/korch-hydro [KILLS]
set -euo pipefail

hydro=${1:?usage: hydro_outputs.sh PATH/TO/korch-hydro [KILLS]}
kills=${2:-20}
dir=$(mktemp -d "${TMPDIR:-/tmp}/korch-hydro-outputs.XXXXXX")
trap 'rm -rf "$dir"' EXIT
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} OMP_PROC_BIND=false OMP_WAIT_POLICY=passive

fail() {
  echo "FAIL: $*" >&2
  ls -la "$dir/out" >&2 || true
  exit 1
}

# Many blocks make a large trace (one event per block and cycle) and a large density.png.
first=(--blocks 16 --cells-per-block 16 --steps 4 --quiet --out "$dir/out")
second=(--blocks 24 --cells-per-block 12 --steps 3 --threads 1 --quiet --out "$dir/out")
outputs=(density.png timeline.png trace.json)

png_complete() {  # the last 12 bytes: IEND chunk of length 0 and its CRC
  [[ $(tail -c 12 "$1" | od -An -tx1 | tr -d ' \n') == 0000000049454e44ae426082 ]]
}
json_complete() {
  if command -v python3 >/dev/null; then
    python3 -m json.tool "$1" >/dev/null 2>&1
  else
    [[ $(tail -c 64 "$1" | tr -d ' \n\r\t' | tail -c 1) == "]" || $(tail -c 64 "$1" | tr -d ' \n\r\t' | tail -c 1) == "}" ]]
  fi
}

check_outputs() {
  local when=$1 f name
  for f in "${outputs[@]}"; do
    [[ -s $dir/out/$f ]] || fail "$when: $f is missing or empty"
    case $f in
      *.png) png_complete "$dir/out/$f" || fail "$when: $f is not a complete PNG" ;;
      *.json) json_complete "$dir/out/$f" || fail "$when: $f is not complete JSON" ;;
    esac
  done
  # density.png is deterministic: it is exactly the first run's or the second run's picture.
  local sum
  sum=$(md5sum <"$dir/out/density.png")
  [[ $sum == "$old_density" || $sum == "$new_density" ]] || fail "$when: density.png is neither the old nor the new picture"
  for f in "$dir"/out/* "$dir"/out/.[!.]*; do
    [[ -e $f ]] || continue
    name=${f##*/}
    case $name in
      density.png|timeline.png|trace.json) ;;
      .*.korch-tmp-[0-9]*) ;;
      *) fail "$when: unexpected file $name" ;;
    esac
  done
}

# The reference pictures of both runs, each from a complete run.
"$hydro" "${second[@]}" >/dev/null || fail "the second run's configuration does not run"
new_density=$(md5sum <"$dir/out/density.png")
start=$(date +%s%N)
"$hydro" "${first[@]}" >/dev/null || fail "the first run failed"
old_density=$(md5sum <"$dir/out/density.png")
[[ $old_density != "$new_density" ]] || fail "the two runs' pictures should differ"
check_outputs "after a complete run"

# How long a second run takes, so that the kills spread over its whole length.
start=$(date +%s%N)
"$hydro" "${second[@]}" >/dev/null
run_ms=$(( ($(date +%s%N) - start) / 1000000 ))
"$hydro" "${first[@]}" >/dev/null
echo "a run takes ${run_ms} ms; killing $kills runs at random moments"

RANDOM=4242  # the same moments every time
for ((k = 1; k <= kills; ++k)); do
  # Delays cover the whole run, the last fifth (writing outputs) twice as often.
  if ((k % 2 == 0)); then
    delay=$((run_ms * 8 / 10 + RANDOM % (run_ms * 3 / 10 + 1)))
  else
    delay=$((RANDOM % (run_ms + 1)))
  fi
  "$hydro" "${second[@]}" >/dev/null 2>&1 &
  pid=$!
  sleep "$(printf '%d.%03d' $((delay / 1000)) $((delay % 1000)))"
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  check_outputs "kill $k after ${delay} ms"
done

# A complete run afterwards gives the new outputs and clears the temporaries of the killed runs.
"$hydro" "${second[@]}" >/dev/null || fail "the run after the kills failed"
check_outputs "after the kills"
[[ $(md5sum <"$dir/out/density.png") == "$new_density" ]] || fail "density.png is not the new picture after a complete run"
leftover=$(find "$dir/out" -name '.*.korch-tmp-*' | wc -l)
((leftover == 0)) || fail "$leftover temporaries left after a complete run"
echo "hydro outputs: $kills killed runs, every output always complete"
