#!/usr/bin/env bash
# Checked MPI jobs (make test-mpi): ranks given different flags or data end
# the job non-zero, naming the difference, within 10 s; a stopped rank ends
# the job through the collective watchdog (--mpi-timeout) within 2 minutes.
# $1: the kdual binary; $MPIRUN: mpirun with its options.
set -u
bin=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
awk 'BEGIN { srand(5); for (i = 0; i < 400; i++) { for (j = 0; j < 6; j++) printf "%s%.6f", (j ? "," : ""), rand() + i % 3; print "" } }' > "$dir/x.csv"
base="kpca fit --mpi --input $dir/x.csv --quiet"
fail=0
for pair in "--kernel laplace|--kernel gaussian" "--solver block|--solver lanczos" "--max-rows 300|--max-rows 400" \
            "--components 3|--components 4" "--tol 1e-6|--tol 1e-8"; do
  a=${pair%|*}; b=${pair#*|}
  start=$(date +%s)
  timeout 30 $MPIRUN -np 1 "$bin" $base $a : -np 1 "$bin" $base $b >/dev/null 2>"$dir/err"
  rc=$?; secs=$(( $(date +%s) - start ))
  if [ $rc -eq 0 ] || [ $rc -eq 124 ] || [ $secs -gt 10 ] || ! grep -q "disagree" "$dir/err"; then
    echo "test-mpi: ranks with '$a' and '$b': status $rc after $secs s, no disagreement reported:"; cat "$dir/err"; fail=1
  else
    echo "test-mpi: ranks with '$a' and '$b' ended the job with status $rc after $secs s: $(grep -m1 disagree "$dir/err")"
  fi
done
# A stopped rank: the other waits in a collective until the watchdog ends it.
start=$(date +%s)
$MPIRUN -np 2 "$bin" kpca fit --mpi --data fashion --n 12000 --operator matrix-free --tol 1e-12 --components 20 \
  --mpi-timeout 20s --quiet >/dev/null 2>"$dir/err" &
job=$!
sleep 6
victim=$(pgrep -f -- "kpca fit --mpi --data fashion --n 12000" | grep -v "^$job\$" | while read p; do
  [ "$(cat /proc/$p/comm 2>/dev/null)" = "kdual" ] && echo $p; done | tail -1)
if [ -z "$victim" ]; then
  echo "test-mpi: no rank to stop (the job ended early?)"; cat "$dir/err"; fail=1
else
  kill -STOP "$victim"
  ( sleep 120; kill -KILL "$victim" $job 2>/dev/null ) & guard=$!
  wait $job; rc=$?; secs=$(( $(date +%s) - start ))
  kill $guard 2>/dev/null; kill -KILL "$victim" 2>/dev/null
  if [ $rc -eq 0 ] || [ $secs -ge 120 ] || ! grep -q "waited .* in MPI_.*(collective [0-9]*); .*entered it" "$dir/err"; then
    echo "test-mpi: a stopped rank: status $rc after $secs s, no watchdog message:"; cat "$dir/err"; fail=1
  else
    echo "test-mpi: a stopped rank ended the job with status $rc after $secs s: $(grep -m1 waited "$dir/err")"
  fi
fi
exit $fail
