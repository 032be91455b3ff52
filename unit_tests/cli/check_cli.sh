#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Command-line checks of one korch program (ctest runs one per program and backend):
#   check_cli.sh NAME PATH      e.g. check_cli.sh korch-hydro build/openmp/apps/hydro/korch-hydro
# (NAME korch-airfoil-mpi: korch-airfoil under mpirun, named by KORCH_MPIEXEC and KORCH_MPIEXEC_NP.)
# Malformed input (bad numbers, trailing junk, nan/inf, zero or negative counts, unknown options and
# subcommands, missing values, malformed --kokkos-* arguments) must exit 2 with the option named on
# stderr; --help exits 0 with the program's name first; no run may end on a signal. Good inputs are
# tiny, and benchmarks are only given bad input and --help: they never run, except
# korch-bench-task_bench, whose --quick sweep on a few tasks takes a fraction of a second.
set -uo pipefail
name=$1
prog=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
checks=0

fail() {
  echo "FAIL: $name $*" >&2
  sed 's/^/  stderr: /' "$tmp/err" | head -n 5 >&2
  failures=$((failures + 1))
}

# run ARGS...: runs the program with a time limit; sets rc, stdout in $tmp/out, stderr in $tmp/err.
run() {
  checks=$((checks + 1))
  timeout 120 "$prog" "$@" > "$tmp/out" 2> "$tmp/err"
  rc=$?
  if ((rc >= 124)); then fail "[$*]: ended with status $rc (signal or time limit)"; return 1; fi
  return 0
}

# bad WANT ARGS...: usage error (exit 2) whose message names WANT.
bad() {
  local want=$1
  shift
  run "$@" || return
  if ((rc != 2)); then fail "[$*]: exit status $rc, expected 2 (usage error)"; return; fi
  grep -qF -- "$want" "$tmp/err" || fail "[$*]: stderr does not name '$want'"
  grep -q "^$name: " "$tmp/err" || fail "[$*]: stderr does not start with '$name: '"
}

# good ARGS...: exits 0 (else the failure shows the end of stdout too: a program's own verdict,
# such as a mismatch against its reference, is there).
good() {
  run "$@" || return
  ((rc == 0)) && return
  fail "[$*]: exit status $rc, expected 0"
  tail -n 8 "$tmp/out" | sed 's/^/  stdout: /' >&2
}

# failure ARGS...: a runtime failure (exit 1) reported in one line "NAME: ...".
failure() {
  run "$@" || return
  ((rc == 1)) || fail "[$*]: exit status $rc, expected 1 (runtime failure)"
  # Kokkos' own diagnostics (e.g. its warning that the kernels' architecture is older than the
  # GPU's) are not the program's: only the program's lines are counted.
  grep -v '^Kokkos::' "$tmp/err" > "$tmp/err.own" || true
  [[ $(wc -l < "$tmp/err.own") -eq 1 ]] && grep -q "^$name: " "$tmp/err.own" || fail "[$*]: expected one line '$name: ...' on stderr"
}

# help_ok [kokkos]: --help exits 0, starts with "NAME:", documents the exit statuses (and --kokkos-*).
help_ok() {
  for h in --help -h; do
    run "$h" || return
    ((rc == 0)) || fail "[$h]: exit status $rc"
    head -n 1 "$tmp/out" | grep -q "^$name: " || fail "[$h]: help does not start with '$name: '"
    grep -q "Exit status: 0 success, 1 runtime failure, 2 usage error" "$tmp/out" || fail "[$h]: no exit statuses"
    if [[ ${1:-} == kokkos ]]; then grep -q -- "--kokkos-" "$tmp/out" || fail "[$h]: no word on --kokkos-*"; fi
    # Each value is named for a person (N, X, NAME, FILE), not by CLI11's type, and a default said once.
    ! grep -E '^  [^ ].* (TEXT|INT|UINT|FLOAT)(:[A-Z]+)?( |$)' "$tmp/out" > /dev/null || fail "[$h]: a value shown as CLI11's type name"
    ! grep -E '\(default.*\(default' "$tmp/out" > /dev/null || fail "[$h]: a default stated twice"
  done
}

# Checks every program that starts Kokkos shares.
kokkos_common() {
  help_ok kokkos
  bad --bogus --bogus
  bad --kokkos-threads --kokkos-threads 2
  bad --kokkos-threads --kokkos-threads=two
  bad --kokkos-numa --kokkos-numa=-1
}

case $name in
  korch-hydro)
    kokkos_common
    small=(--blocks 1 --cells-per-block 8 --steps 1 --quiet --out "$tmp/out-hydro")
    for v in abc 3x 0 -1 1e3 " 3" nan; do bad --steps --steps "$v"; done
    bad --steps --steps
    bad --blocks --blocks 0
    bad --blocks --blocks -2
    bad --blocks --blocks 46341 --cells-per-block 2
    bad --blocks --dim 3 --blocks 2000
    bad "more than this machine's" --blocks 23170 --cells-per-block 2
    bad --cells-per-block --cells-per-block 1
    bad --cells-per-block --cells-per-block 8x
    for v in nan inf 0 1.5 -0.1 0.4junk; do bad --cfl --cfl "$v"; done
    for v in nan inf -1 0; do bad --tmax --tmax "$v"; done
    bad --conduction --conduction -1
    bad --conduction --conduction nan
    for v in 0 65 two 2.5; do bad --threads --threads "$v"; done
    bad --dim --dim 4
    bad --config --config gpu
    # --config takes the built-ins' names and their aliases; a bad one is answered with every name.
    bad "'gpu': use cpu_only (or cpu), gpu_only (or device)" --config gpu
    run --help && grep -qF "cpu_gpu_action_parallel (or action-parallel)" "$tmp/out" || fail "--help: no configuration names"
    bad --problem --problem sedov2
    bad --boundary --boundary closed
    bad --limiter --limiter superbee
    bad --tile --tile 0
    for v in 0 -1 abc 1.5 0t -0.1t 1et nant; do bad --plot-every --plot-every "$v"; done
    bad --plot-prefix --plot-every 2 --plot-prefix a/b
    bad --tile --tile 64
    bad --packet-blocks --packet-blocks 0
    bad --packet-blocks --config cpu --packet-blocks 2
    bad --out --out ""
    # A folder that cannot be made is refused before Kokkos starts, naming its option.
    : > "$tmp/a-file"
    bad "option --out: output directory" --blocks 1 --cells-per-block 8 --steps 1 --quiet --out "$tmp/a-file"
    if run "${small[@]}" --plot-every 1 && ((rc == 0)); then  # a build with HDF5
      bad "option --plot-dir: output directory" "${small[@]}" --plot-every 1 --plot-dir "$tmp/a-file/plots"
    fi
    bad --steps --steps 3 --tmax 0.1
    bad --log --log=maybe
    bad "unknown option or argument: extra" "${small[@]}" extra
    good "${small[@]}" --threads 2 --log --kokkos-threads=1
    [[ -s $tmp/out-hydro/density.png ]] || fail "no density.png"
    bad "--config cpu_gpu_data_parallel" --plan --config split
    bad "--config cpu_gpu_data_parallel" --plan --config cpu_gpu_data_parallel
    bad --packet-blocks --config cpu_only --packet-blocks 2
    bad --device-kernel --config device --device-kernel faster
    bad --device-kernel --device-kernel fused
    bad --device-kernel --plan --config device --device-kernel fused
    bad --device-kernel --config device --max-level 1 --device-kernel faces
    good "${small[@]}" --config device --device-kernel fused
    good "${small[@]}" --config device --device-kernel staged
    bad --split-even --config device --split-even
    good "${small[@]}" --config split --split-even
    good "${small[@]}" --config cpu_gpu_data_parallel --tile 4
    good "${small[@]}" --plan --tile 8
    bad --packet-blocks --plan --packet-blocks 2
    bad --inject-failure --plan --inject-failure 0
    bad --operation --plan --operation "$tmp/op.json"
    bad --operation --operation ""
    bad --operation --operation "$tmp/missing.json"
    good "${small[@]}" --plan
    grep -q "plan of the built-in operation" "$tmp/out" || fail "--plan: the summary does not name the plan"
    echo '{"name": "hydro_step", "variables": ["rho"], "steps": []}' > "$tmp/op.json"
    failure "${small[@]}" --operation "$tmp/op.json"
    grep -q "field variables" "$tmp/err" || fail "--operation with the wrong variables: the error does not name the field"
    # The adaptive mesh: its options, and those it does not have.
    for v in -1 9 two; do bad --max-level --max-level "$v"; done
    bad --refine-above --refine-above 0.5
    bad --regrid-every --regrid-every 2
    bad --refine-above --max-level 1 --refine-above 1.5
    bad "--derefine-below 0.5 and --refine-above 0.4" --max-level 1 --refine-above 0.4 --derefine-below 0.5
    bad --cells-per-block --max-level 1 --cells-per-block 9
    bad "leaf 64 does not exist" --max-level 1 --blocks 4 --inject-failure 64
    rm -f "$tmp/out-hydro/density.png"
    good --blocks 2 --cells-per-block 8 --steps 3 --quiet --out "$tmp/out-hydro" --max-level 2 --regrid-every 1
    [[ -s $tmp/out-hydro/density.png ]] || fail "--max-level: no density.png"
    grep -q "leaves per level" "$tmp/out" || fail "--max-level: the summary gives no leaves per level"
    good --blocks 2 --cells-per-block 8 --steps 3 --quiet --out "$tmp/out-hydro" --max-level 2 --plan
    grep -q "configuration plan of the built-in operation" "$tmp/out" || fail "--max-level --plan: the summary does not name the plan"
    # Conduction across levels, or the one-line error of a build without Kokkos Kernels.
    if run --blocks 2 --cells-per-block 8 --steps 3 --quiet --out "$tmp/out-hydro" --max-level 2 --conduction 0.05; then
      if ((rc == 0)); then
        grep -q "conduction (CG on the composite mesh)" "$tmp/out" || fail "--max-level --conduction: no conduction share"
      else
        grep -q "Kokkos Kernels" "$tmp/err" || fail "--max-level --conduction: exit status $rc"
      fi
    fi
    ;;
  korch-airfoil)
    kokkos_common
    for v in abc 0 -1 1x inf; do bad --iterations --iterations "$v"; done
    bad --iterations --iterations
    for v in 0 -3 two; do bad --threads --threads "$v"; done
    bad --every --every 0
    bad --seed --seed -1
    bad --seed --seed 1.5
    bad --executor --executor fastest
    bad --dump --dump nothing
    bad --data --data ""
    good --iterations 1 --threads 2
    grep -q "1 iterations in" "$tmp/out" || fail "--iterations 1: no timing line"
    grep -q "inf ms" "$tmp/out" && fail "--iterations 1: infinite time per iteration"
    good --iterations 1 --executor message --threads 2
    failure --iterations 1 --data "$tmp/no-such-folder"
    ;;
  korch-airfoil-mpi)
    # korch-airfoil on 2 MPI ranks ($KORCH_MPIEXEC, its $KORCH_MPIEXEC_NP flag): an option for one
    # rank is a usage error naming it; a short run on every executor prints the rms.
    printf '#!/usr/bin/env bash\nexec "%s" %s 2 "%s" "$@"\n' "$KORCH_MPIEXEC" "$KORCH_MPIEXEC_NP" "$prog" > "$tmp/on-2-ranks"
    chmod +x "$tmp/on-2-ranks"
    prog=$tmp/on-2-ranks
    name=korch-airfoil
    bad --dump --dump res_calc
    bad --iterations --iterations 0
    for executor in sequential direct message; do
      good --iterations 2 --executor "$executor"
      grep -q "on 2 ranks" "$tmp/out" || fail "[--executor $executor]: does not say it runs on 2 ranks"
    done
    ;;
  korch-mesh-gen)
    help_ok
    for v in nan inf 0 -5 8abc 0.5; do bad --far 16 4 "$tmp/m" --far "$v"; done
    bad --far 16 4 "$tmp/m" --far
    bad NI x 4 "$tmp/m"
    bad NI 4 4 "$tmp/m"
    bad NI 16x 4 "$tmp/m"
    bad NJ 16 0 "$tmp/m"
    bad NJ 16 -1 "$tmp/m"
    bad OUTDIR 16 4
    : > "$tmp/a-file"
    bad "OUTDIR: output directory" 16 4 "$tmp/a-file"
    bad "unknown option or argument: junk" 16 4 "$tmp/m" junk
    bad --kokkos-threads=2 16 4 "$tmp/m" --kokkos-threads=2
    bad "NI x NJ" 100000 100000 "$tmp/m"
    good 16 4 "$tmp/m" --far 5
    [[ -s $tmp/m/mesh.dat && -s $tmp/m/constants.txt ]] || fail "no mesh.dat / constants.txt"
    ;;
  korch-baseband)
    kokkos_common
    for v in abc 0 -1 5x 1e2; do bad --frames --frames "$v"; done
    bad --frames --frames
    bad --max-len --max-len 0
    bad --max-len --max-len 65536
    for v in nan inf -1 0.4x; do bad --sigma --sigma "$v"; done
    for v in 0 -4 four; do bad --threads --threads "$v"; done
    bad --seed --seed -1
    bad --dump --dump=perhaps
    good --frames 1 --max-len 16 --threads 4
    grep -q "payload bits: exact" "$tmp/out" || fail "--frames 1: payload not exact"
    ;;
  korch-dataflow)
    kokkos_common
    for v in abc 0 -2 5x 1e3; do bad --n filters --n "$v"; done
    bad --n filters --n
    for v in 0 -1 2000 x; do bad --width --width "$v"; done
    for v in -2 0 two; do bad --instances --instances "$v"; done
    for v in nan inf 0.5 -1 4x; do bad --scale --scale "$v"; done
    bad --buffer --buffer 0
    for v in scratch GLOBAL ""; do bad --instance-memory --instance-memory "$v"; done
    bad --threads filters --threads 2
    bad "unknown option or argument: bogus" bogus
    bad "unknown option or argument: bogus" filters bogus
    bad "subcommands: filters, expander" bogus
    good filters expander --n 500
    grep -q "^filter chain" "$tmp/out" && grep -q "^expander" "$tmp/out" \
      || fail "[filters expander]: both should run"
    [[ $(grep -m1 -n "^filter chain" "$tmp/out" | cut -d: -f1) -lt $(grep -m1 -n "^expander" "$tmp/out" | cut -d: -f1) ]] \
      || fail "[filters expander]: not in the order given"
    good --n 200 --width 32 --instances 2 --scale 2 route
    good --n 300 --width 8 --instance-memory team_scratch filters parser
    grep -q "state in team scratch" "$tmp/out" || fail "[--instance-memory team_scratch]: instances not in team scratch"
    if grep -q "MISMATCH" "$tmp/out"; then fail "[--instance-memory team_scratch]: output differs from the reference"; fi
    good --n 300 --width 8 --cap-registers nested parser
    if grep -q "MISMATCH" "$tmp/out"; then fail "[--cap-registers]: output differs from the reference"; fi
    run filters --help && ((rc == 0)) && head -n 1 "$tmp/out" | grep -q "^$name: " \
      || fail "[filters --help]: not the program's help"
    ;;
  korch-info)
    kokkos_common
    bad --threads --threads 2
    bad "unknown option or argument: extra" extra
    good
    good --kokkos-threads=1
    ;;
  korch-bench-hydro)
    kokkos_common
    bad threads x
    bad threads 0
    bad cells_per_block 4 1
    bad cells_per_block 4 256x
    bad blocks 4 256 0
    bad steps 4 256 4 0
    bad steps 4 256 4 -30
    bad dim 4 256 4 30 4
    bad "unknown option or argument: 9" 4 256 4 30 2 9
    bad --threads --threads 2
    ;;
  korch-bench-hydro_amr)
    kokkos_common
    for v in 0 x 1.5; do bad --roots --roots "$v"; done
    bad --cells-per-block --cells-per-block 2
    bad --cells-per-block --cells-per-block 9
    bad --max-level --max-level 0
    bad --tmax --tmax 0
    bad --uniform-cells-per-block --uniform-cells-per-block 50
    bad --rounds --rounds 0
    bad --dim --dim 4
    bad --threads --threads 0
    bad "unknown option or argument: 3" 3
    ;;
  korch-bench-hydro_plan)
    kokkos_common
    bad threads x
    bad cells_per_block 4 1
    bad blocks 4 256 0
    bad steps 4 256 4 0
    bad dim 4 256 4 30 4
    bad "unknown option or argument: 9" 4 256 4 30 2 9
    ;;
  korch-bench-dataflow)
    kokkos_common
    bad items abc
    bad items 0
    bad items 10x
    bad width 100 0
    bad width 100 2000
    bad repeats 100 64 0
    bad "unknown option or argument: 7" 100 64 5 7
    ;;
  korch-bench-mesh)
    kokkos_common
    bad --ni --ni 4
    bad --ni --ni abc
    bad --nj --nj 0
    bad --iterations --iterations 0
    bad --rounds --rounds -1
    bad --md-iterations --md-iterations 1x
    bad --threads --threads 0
    bad --ni --ni
    ;;
  korch-bench-runtime)
    kokkos_common
    bad threads 0
    bad threads abc
    bad repetitions 2 0
    bad repetitions 2 5x
    ;;
  korch-bench-streams)
    kokkos_common
    bad frames 0
    bad frames abc
    bad threads 10 0
    bad queue_capacity 10 2 0
    bad commit_queue_capacity 10 2 16 -1
    bad reps 10 2 16 16 0
    ;;
  korch-bench-typed_action)
    kokkos_common
    bad rounds 0
    bad rounds abc
    bad --cells --cells 0
    bad --cells --cells 17
    ;;
  korch-bench-soak)
    kokkos_common
    bad cycles 0
    bad cycles abc
    bad cycles 1e6
    bad --seed --seed -1
    bad --seed --seed
    ;;
  korch-bench-thread_team)
    kokkos_common
    bad items 0
    bad items 1e5
    bad reps 1000 0
    ;;
  korch-bench-task_bench)
    kokkos_common
    for v in 0 -1 abc 2x 1e3; do bad --width --width "$v"; done
    bad --width --width 65537
    bad --width --width
    bad --steps --steps 0
    for v in 0 -2 two; do bad --threads --threads "$v"; done
    bad --rounds --rounds 0
    bad --dim --dim 4
    bad --factor --factor 1
    bad --factor --factor 2.5
    bad --max-iterations --max-iterations 0
    bad --min-iterations --min-iterations 8 --max-iterations 4
    bad --patterns --patterns stencil
    bad --patterns --patterns stencil_1d,bogus
    bad --drivers --drivers cilk
    bad "--width x --steps" --width 65536 --steps 1000
    bad --quick --quick=perhaps
    bad "unknown option or argument: extra" --quick extra
    # A tiny sweep of every pattern and driver: the tasks' checks pass and the summary is printed.
    good --quick --steps 10 --max-iterations 64
    for p in trivial no_comm stencil_1d fft tree; do
      grep -q "^METG(50%) $p W=2: korch .* us" "$tmp/out" || fail "[--quick]: no summary line for $p"
    done
    grep -q "^load average at start: .*; at end: " "$tmp/out" || fail "[--quick]: no load average"
    good --quick --width 5 --steps 7 --max-iterations 16 --patterns fft,tree,stencil_1d --threads 3
    # A task that writes a wrong output must fail the run (status 1), whichever driver runs it.
    for d in $(sed -n 's/.*(built in: \([a-z_, ]*\)).*/\1/p' < <("$prog" --help) | tr -d ,); do
      failure --quick --steps 10 --max-iterations 16 --patterns stencil_1d --drivers "$d" --inject-fault
      grep -q "failed their check" "$tmp/err" || fail "[--inject-fault --drivers $d]: the tasks' check did not say so"
    done
    ;;
  korch-plan)
    help_ok
    cat > "$tmp/op.json" <<'JSON'
{"name": "op", "variables": ["u", "v"], "steps": [
  {"action": {"name": "A", "writes": ["u"], "hints": {"short": true}}},
  {"action": {"name": "B", "reads": [{"variable": "u", "stencil": 1}], "writes": ["v"]}}]}
JSON
    echo '{"name": "op", "steps": [{"action": {"name": "A", "reads": ["rho"]}}]}' > "$tmp/bad.json"
    bad OPERATION
    bad OPERATION ""
    for v in 0 -1 two 2.5; do bad --teams "$tmp/op.json" --teams "$v"; done
    bad --threads "$tmp/op.json" --threads 0
    bad --out "$tmp/op.json" --out ""
    bad --kokkos-threads=2 "$tmp/op.json" --kokkos-threads=2
    bad "unknown option or argument: extra" "$tmp/op.json" extra
    failure "$tmp/no-such.json"
    failure "$tmp/bad.json"
    grep -q "action 'A'): field reads\[0\].variable: unknown variable 'rho'" "$tmp/err" || fail "[bad.json]: error does not name action and field"
    failure "$tmp"
    grep -q "is a folder" "$tmp/err" || fail "[a folder as OPERATION]: error does not say it is a folder"
    # Not a regular file: refused at once, never read until memory or a writer runs out.
    failure /dev/zero
    grep -q "is not a regular file" "$tmp/err" || fail "[/dev/zero as OPERATION]: error does not say it is no regular file"
    mkfifo "$tmp/fifo"
    failure "$tmp/fifo"
    grep -q "is not a regular file" "$tmp/err" || fail "[a FIFO as OPERATION]: error does not say it is no regular file"
    good "$tmp/op.json" --out "$tmp/plan" --teams 2
    for f in graph.json graph.dot plan.json bundle0.dot bundle1.dot; do [[ -s $tmp/plan/$f ]] || fail "no $f"; done
    grep -q '"guard_fill"' "$tmp/plan/plan.json" || fail "plan.json: no guard fill between A and B"
    bad --driver-function "$tmp/op.json" --driver "$tmp/d.cpp" --driver-function 9lives
    bad "--driver-function: 'int' is a C++ keyword" "$tmp/op.json" --driver "$tmp/d.cpp" --driver-function int
    bad --driver-function "$tmp/op.json" --driver "$tmp/d.cpp" --driver-function _Run
    bad --driver "$tmp/op.json" --driver ""
    # Destinations that cannot be written: usage errors naming the option, before planning.
    : > "$tmp/a-file"
    bad "option --out: output directory" "$tmp/op.json" --out "$tmp/a-file"
    bad "option --driver: the folder" "$tmp/op.json" --out "$tmp/plan" --driver "$tmp/no-such-folder/d.cpp"
    bad "option --driver: '$tmp' is a folder" "$tmp/op.json" --out "$tmp/plan" --driver "$tmp"
    good "$tmp/op.json" --out "$tmp/plan" --driver "$tmp/plan/driver.cpp" --driver-function run_op
    grep -q 'void run_op(korch::Runtime& runtime' "$tmp/plan/driver.cpp" || fail "driver.cpp: no function run_op"
    # PNG drawings through Graphviz's dot when it is on PATH; a clear word when it is not.
    if command -v dot > /dev/null; then
      for f in graph bundle0 bundle1; do
        [[ $(head -c 4 "$tmp/plan/$f.png" | tail -c 3) == PNG ]] || fail "no PNG drawing $f.png"
      done
    fi
    rm -f "$tmp/plan/"*.png
    good "$tmp/op.json" --out "$tmp/plan" --no-png
    compgen -G "$tmp/plan/*.png" > /dev/null && fail "[--no-png]: PNG files written"
    checks=$((checks + 1))
    if ! env PATH=/nonexistent "$prog" "$tmp/op.json" --out "$tmp/plan" > "$tmp/out" 2> "$tmp/err"; then
      fail "[without dot on PATH]: exit status $?"
    fi
    grep -q "no PNG drawings: Graphviz's 'dot' is not on PATH" "$tmp/out" || fail "[without dot on PATH]: not said"
    compgen -G "$tmp/plan/*.png" > /dev/null && fail "[without dot on PATH]: PNG files written"
    ;;
  korch-configurations)
    help_ok
    bad --bogus --bogus
    bad "'cpu_onl' is not one of" cpu_onl
    bad --dot --dot ""
    : > "$tmp/a-file"
    bad "option --dot: output directory" --dot "$tmp/a-file"
    bad --kokkos-threads --kokkos-threads=1
    good
    grep -q "^split_itor$" "$tmp/out" || fail "[]: split_itor not listed"
    grep -q "^  B (optional), team post: " "$tmp/out" || fail "[]: split_itor's optional slot B not listed"
    good split_itor --json --dot "$tmp/dots"
    grep -q '"name": "split_itor"' "$tmp/out" || fail "[--json]: no JSON text"
    grep -q '^digraph "split_itor"' "$tmp/dots/split_itor.dot" || fail "[--dot]: no drawing split_itor.dot"
    ;;
  *)
    echo "check_cli.sh: no checks for '$name'" >&2
    exit 2
    ;;
esac

echo "$name: $checks runs, $failures failed"
((failures == 0))
