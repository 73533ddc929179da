#!/usr/bin/env bash
# Whole-process CPU and peak memory of `gitops-core diff --output json` on a generated
# N-resource application (default 10,000), side by side with the yardstick: a program that only
# parses the same two files into serde_json::Value and serialises them again.
#
#   bash benches/whole-process.sh [N] [RUNS] [CARGO FEATURES...]
#   COMPARE_BIN=/tmp/gitops-core-serial bash benches/whole-process.sh 10000 5 parallel
#   BIN=target/release/gitops-core bash benches/whole-process.sh 10000 5
#
# A fair floor: both programs are built by the same `cargo bench --no-run`, so both are the
# `bench` profile (the `release` profile's code, with line tables) and both use the binary's
# allocator (mimalloc: benches/whole_process.rs sets it with the `cli` feature, as
# src/bin/gitops-core/main.rs does); the binary measured is the `gitops-core` that this build
# leaves in target/release (a bench builds the package's binaries too). BIN measures another
# binary already built instead.
#
# Prints, for each program, the median of RUNS (default 5) runs of user+system CPU seconds, of
# wall-clock seconds and of peak RSS (from /usr/bin/time -v), then the ratios. Needs GNU time (/usr/bin/time).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-10000}
runs=${2:-5}
shift $(( $# > 2 ? 2 : $# ))
features=("$@")
# BENCH: the whole_process bench binary already built (`cargo bench --bench whole_process --no-run`).
bench=${BENCH:-$(cargo bench --bench whole_process --no-run ${features[@]:+--features "${features[*]}"} 2>&1 | sed -n 's/.*Executable .*(\(.*\)).*/\1/p' | tail -1)}
[ -x "$bench" ] || { echo "could not build benches/whole_process.rs" >&2; exit 2; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$bench" generate "$n" "$dir"
ls -l "$dir" | awk 'NR>1 {printf "%s %.1f MB\n", $9, $5/1e6}'
bin=${BIN:-${CARGO_TARGET_DIR:-target}/release/gitops-core}
limits=(--max-objects $((4 * n + 100)) --max-input-bytes $((1 << 31)))

# measure NAME CMD...: RUNS runs, median CPU seconds and median peak RSS in MB.
measure() {
    local name=$1; shift
    local cpu=() rss=() wall=()
    for _ in $(seq "$runs"); do
        /usr/bin/time -v -o "$dir/time" "$@" >/dev/null 2>"$dir/err" || [ $? -eq 1 ] \
            || { cat "$dir/err" >&2; exit 2; }
        cpu+=("$(awk -F': ' '/User time|System time/ {s += $2} END {printf "%.2f", s}' "$dir/time")")
        rss+=("$(awk -F': ' '/Maximum resident/ {printf "%.0f", $2/1024}' "$dir/time")")
        wall+=("$(awk '/Elapsed \(wall clock\)/ {n = split($NF, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i]; printf "%.2f", s}' "$dir/time")")
    done
    local mc mr mw
    mc=$(printf '%s\n' "${cpu[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
    mr=$(printf '%s\n' "${rss[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
    mw=$(printf '%s\n' "${wall[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
    printf '%-12s cpu %6.2f s (runs: %s)  wall %6.2f s  peak %5d MB (runs: %s)\n' "$name" "$mc" "${cpu[*]}" "$mw" "$mr" "${rss[*]}"
    eval "${name//[^a-z]/_}_cpu=$mc; ${name//[^a-z]/_}_rss=$mr"
}
measure yardstick "$bench" yardstick "$dir/desired.json" "$dir/live.json"
measure diff "$bin" "${limits[@]}" diff --desired "$dir/desired.json" \
    --live "$dir/live.json" --app "$dir/app.json" --output json
# COMPARE_BIN=PATH: another build of gitops-core measured the same way (e.g. the serial one
# next to a `parallel` build).
if [ -n "${COMPARE_BIN:-}" ]; then
    measure compare "$COMPARE_BIN" "${limits[@]}" diff --desired "$dir/desired.json" \
        --live "$dir/live.json" --app "$dir/app.json" --output json
fi
awk -v a="$diff_cpu" -v b="$yardstick_cpu" -v c="$diff_rss" -v d="$yardstick_rss" \
    'BEGIN {printf "ratio (diff / yardstick): cpu %.2fx, peak memory %.2fx\n", a/b, c/d}'
