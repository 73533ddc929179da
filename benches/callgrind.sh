#!/usr/bin/env bash
# Instruction counts of the headline cases (benches/instructions.rs) under callgrind.
#
#   bash benches/callgrind.sh            # every case
#   bash benches/callgrind.sh CASE...    # some of them
#
# Prints one line per case: the name and the instructions executed inside its `measured_*`
# function (setup excluded). Counts are repeatable for the same binary and input, whatever
# else the machine is doing; compare them before and after a change. Needs valgrind.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(cargo bench --bench instructions --no-run 2>&1 | sed -n 's/.*Executable .*(\(.*\)).*/\1/p' | tail -1)
[ -x "$bin" ] || { echo "could not build benches/instructions.rs" >&2; exit 2; }
if [ $# -eq 0 ]; then set -- $("$bin" --list); fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '%-36s %15s\n' case instructions
for case in "$@"; do
    valgrind --tool=callgrind --callgrind-out-file="$out/$case" \
        --toggle-collect='*measured_*' "$bin" "$case" >/dev/null 2>"$out/$case.log" \
        || { cat "$out/$case.log" >&2; exit 2; }
    ir=$(sed -n 's/^summary: \([0-9]*\).*/\1/p' "$out/$case")
    printf '%-36s %15s\n' "$case" "$ir"
done
