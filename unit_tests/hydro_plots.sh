#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# korch-hydro's plot files open as their readers expect: every XDMF file is well-formed XML
# (xmllint) and every dataset it names is in its HDF5 file (h5ls), in 2-D and 3-D and on an adaptive
# mesh (one grid per leaf). With MPI, the
# files that 2 and 3 ranks write together are bitwise those of one rank (h5diff).
#
#   hydro_plots.sh PATH/TO/korch-hydro [MPIEXEC]
set -euo pipefail

hydro=${1:?usage: hydro_plots.sh PATH/TO/korch-hydro [MPIEXEC]}
mpiexec=${2:-}
for tool in xmllint h5ls h5diff; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool is missing (scripts/test installs libxml2-utils and hdf5-tools)" >&2; exit 1; }
done
dir=$(mktemp -d "${TMPDIR:-/tmp}/korch-hydro-plots.XXXXXX")
trap 'rm -rf "$dir"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# check_folder DIR: each .xmf parses and each HDF reference in it names a dataset of its file.
check_folder() {
  local folder=$1 xmf ref n=0
  for xmf in "$folder"/*.xmf; do
    xmllint --noout "$xmf" 2>"$dir/xmllint.log" || { fail "$xmf is not well-formed XML: $(head -n 3 "$dir/xmllint.log")"; continue; }
    while read -r ref; do
      h5ls "$folder/${ref%%:*}${ref#*:}" >/dev/null 2>&1 || fail "$xmf names $ref, which is not in the file"
      n=$((n + 1))
    done < <(grep -o '[A-Za-z0-9_.-]*\.h5:/[A-Za-z0-9_]*' "$xmf")
  done
  ((n > 0)) || fail "no dataset references in $folder/*.xmf"
  echo "ok: $folder: $(ls "$folder"/*.xmf | wc -l) XDMF files well-formed, $n dataset references found"
}

# run NP OUT ARGS...
run() {
  local np=$1 out=$2
  shift 2
  local launch=()
  ((np > 0)) && launch=("$mpiexec" -n "$np")
  timeout 120 "${launch[@]}" "$hydro" --quiet --threads 1 --out "$out" "$@" > "$dir/log" 2>&1 || {
    fail "${launch[*]} korch-hydro $*: exit $?"
    cat "$dir/log" >&2
    return 1
  }
}

args2=(--problem sedov --blocks 4 --cells-per-block 8 --steps 5 --plot-every 2)
args3=(--problem sod-z --dim 3 --blocks 2 --cells-per-block 8 --steps 4 --plot-every 0.002t)
# An adaptive mesh: one XDMF grid per leaf, over the leaves' stacked cells.
argsa=(--problem sedov --max-level 2 --blocks 2 --cells-per-block 8 --steps 5 --regrid-every 2 --plot-every 2)
run 0 "$dir/one2" "${args2[@]}" && check_folder "$dir/one2"
run 0 "$dir/one3" "${args3[@]}" && check_folder "$dir/one3"
if run 0 "$dir/onea" "${argsa[@]}" && check_folder "$dir/onea"; then
  leaves=$(grep -c '<Grid Name="leaf' "$dir/onea/plot_000005.xmf")
  stacked=$(h5ls "$dir/onea/plot_000005.h5/density" | grep -o '{[0-9]*' | tr -d '{')
  ((leaves > 4 && stacked == leaves * 8)) || fail "adaptive plot: $leaves leaves in the XDMF, $stacked stacked rows in the file"
  echo "ok: adaptive plot: $leaves leaf grids over $stacked stacked rows"
fi

# A run continued from a checkpoint: its series file lists the earlier run's plots too, so it is
# the uninterrupted run's series, byte for byte, and so are the plot files.
args_r=(--problem sedov --blocks 4 --cells-per-block 8 --plot-every 2)
if run 0 "$dir/whole" "${args_r[@]}" --steps 8 && run 0 "$dir/parts" "${args_r[@]}" --steps 4 --checkpoint-every 4 &&
  run 0 "$dir/parts" "${args_r[@]}" --steps 8 --restart "$dir/parts/checkpoint.bin"; then
  if ! cmp -s "$dir/whole/plot.xmf" "$dir/parts/plot.xmf"; then
    fail "restarted run: its series file differs from the uninterrupted run's: $(diff "$dir/whole/plot.xmf" "$dir/parts/plot.xmf" | head -n 6)"
  else
    n=0
    for f in "$dir/whole"/*.h5; do
      h5diff "$f" "$dir/parts/$(basename "$f")" > /dev/null 2>&1 || fail "restarted run: $(basename "$f") differs"
      n=$((n + 1))
    done
    echo "ok: a run continued from a checkpoint lists all $(grep -c '<Grid Name="cycle' "$dir/parts/plot.xmf") plots in its series, as the uninterrupted run; $n plot files equal"
  fi
fi

# A continued run reads back the earlier plots' own XDMF files: one with a changed byte is refused,
# naming it, and the series is left as it was.
if run 0 "$dir/damaged" "${args_r[@]}" --steps 4 --checkpoint-every 4; then
  sed -i 's/Precision="8"/Precision="4"/' "$dir/damaged/plot_000002.xmf"
  cp "$dir/damaged/plot.xmf" "$dir/damaged-series.xmf"
  if timeout 60 "$hydro" --quiet --threads 1 --out "$dir/damaged" "${args_r[@]}" --steps 8 \
    --restart "$dir/damaged/checkpoint.bin" > "$dir/log" 2>&1; then
    fail "a run continued over a damaged plot_000002.xmf exited 0"
  elif ! grep -q "plot file '.*plot_000002.xmf' is damaged" "$dir/log"; then
    fail "a run continued over a damaged plot_000002.xmf: the error does not name it: $(cat "$dir/log")"
  elif ! cmp -s "$dir/damaged/plot.xmf" "$dir/damaged-series.xmf"; then
    fail "a refused continued run changed plot.xmf"
  else
    echo "ok: a run continued over a damaged plot XDMF file refuses, naming it"
  fi
  # A FIFO in a plot's place is refused at once, never waited on.
  rm "$dir/damaged/plot_000002.xmf" && mkfifo "$dir/damaged/plot_000002.xmf"
  if timeout 60 "$hydro" --quiet --threads 1 --out "$dir/damaged" "${args_r[@]}" --steps 8 \
    --restart "$dir/damaged/checkpoint.bin" > "$dir/log" 2>&1; then
    fail "a run continued over a FIFO plot_000002.xmf exited 0"
  elif ! grep -q "plot_000002.xmf': it is not a regular file" "$dir/log"; then
    fail "a run continued over a FIFO plot_000002.xmf: $(cat "$dir/log")"
  else
    echo "ok: a FIFO in a plot XDMF file's place is refused at once"
  fi
fi

# A run continued into a folder holding another run's series (another problem) refuses, naming the
# difference, and leaves that series as it was; a fresh run there starts a series of its own.
if run 0 "$dir/other" --problem sod-x --blocks 4 --cells-per-block 8 --plot-every 2 --steps 4 &&
  run 0 "$dir/saved" "${args_r[@]}" --steps 4 --checkpoint-every 4; then
  cp "$dir/other/plot.xmf" "$dir/other-series.xmf"
  if timeout 60 "$hydro" --quiet --threads 1 --out "$dir/other" "${args_r[@]}" --steps 8 \
    --restart "$dir/saved/checkpoint.bin" > "$dir/log" 2>&1; then
    fail "a run continued into another run's plot folder exited 0"
  elif ! grep -q -- "--plot-dir: the plot series plot in .* is another run's (--problem sod-x there, sedov here)" "$dir/log"; then
    fail "a run continued into another run's plot folder: the error does not name the difference: $(cat "$dir/log")"
  elif ! cmp -s "$dir/other/plot.xmf" "$dir/other-series.xmf"; then
    fail "a refused continued run changed the other run's plot.xmf"
  else
    echo "ok: a run continued into another run's plot folder refuses: $(grep -o 'another run.s ([^)]*)' "$dir/log")"
  fi
  if run 0 "$dir/other" "${args_r[@]}" --steps 2; then
    n=$(grep -c '<Grid Name="cycle' "$dir/other/plot.xmf")
    ((n == 2)) || fail "a fresh run in another run's plot folder lists $n plots in its series, not its own 2"
    grep -q -- "--problem sedov" "$dir/other/plot.series" || fail "a fresh run did not record its series: $(cat "$dir/other/plot.series")"
    echo "ok: a fresh run in another run's plot folder starts its own series ($n plots)"
  fi
fi

if [[ -n $mpiexec ]]; then
  for np in 2 3; do
    for d in 2 3 a; do
      args_name="args$d[@]"
      run "$np" "$dir/np$np-$d" "${!args_name}" || continue
      n=0
      for f in "$dir/one$d"/*.h5; do
        h5diff "$f" "$dir/np$np-$d/$(basename "$f")" > "$dir/h5diff.log" 2>&1 || fail "-np $np ${d}: $(basename "$f") differs from one rank's: $(head -n 5 "$dir/h5diff.log")"
        n=$((n + 1))
      done
      echo "ok: -np $np ${d}: $n plot files bitwise those of one rank"
    done
  done
fi
((failures == 0)) || { echo "$failures failure(s)" >&2; exit 1; }
