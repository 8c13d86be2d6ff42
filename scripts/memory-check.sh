#!/usr/bin/env bash
# Peak memory against the budget (issue: memory within budget): for each n
# and each operator, the fit runs with that operator forced and a budget
# 15% above what the planner says it needs (read from its refusal of a
# 10 MiB budget), under /usr/bin/time -v. The bound is
# peak RSS ≤ budget × 1.1 + 200 MB.
#   scripts/memory-check.sh bin/kdual 20000 40000
set -u
bin=$1; shift
printf '| n | operator | planned | budget | peak RSS | bound | time | ok |\n|---|---|---|---|---|---|---|---|\n'
fail=0
for n in "$@"; do
  for op in float64 float32 matrix-free; do
    need=$("$bin" kpca fit --data fashion --n "$n" --kernel gaussian --operator "$op" --memory 10MiB --components 5 --quiet 2>&1 |
      sed -n 's/.*needs \([0-9.]*\) \([GM]iB\).*/\1 \2/p')
    mib=$(awk -v v="${need% *}" -v u="${need#* }" 'BEGIN { printf "%d", (u == "GiB" ? v * 1024 : v) * 1.15 + 1 }')
    out=$(mktemp)
    start=$(date +%s.%N)
    /usr/bin/time -v "$bin" kpca fit --data fashion --n "$n" --kernel gaussian --operator "$op" --memory "${mib}MiB" --components 5 --quiet >/dev/null 2>"$out"
    rc=$?
    secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$out")
    bound=$(( mib * 1024 * 11 / 10 + 200 * 1000 ))
    ok=yes
    if [ "$rc" -ne 0 ] || [ "$rss" -gt "$bound" ]; then ok=NO; fail=1; fi
    printf '| %d | %s | %s | %d MiB | %d MiB | %d MiB | %s s | %s |\n' "$n" "$op" "$need" "$mib" $((rss / 1024)) $((bound / 1024)) "$secs" "$ok"
    [ "$rc" -ne 0 ] && tail -3 "$out"
    rm -f "$out"
  done
done
exit $fail
