#!/bin/sh
# Runs the given fuzz targets (default: all) one after another, each for FUZZ_SECONDS
# (default 600), logging to fuzz-logs/<target>.log at the repository root. Build them first
# with `cargo fuzz build -s none` (stable toolchain, no sanitizer); the binaries are run
# directly so that a build of another target cannot interfere.
set -u
cd "$(dirname "$0")"
mkdir -p ../fuzz-logs
TIME=${FUZZ_SECONDS:-600}
BIN=target/x86_64-unknown-linux-gnu/release
for t in ${@:-parse_manifests diff strategic_merge ignore_rules health_assess lua_eval plan_build}; do
    mkdir -p "corpus/$t" "artifacts/$t"
    "$BIN/$t" -artifact_prefix="artifacts/$t/" -max_total_time="$TIME" -timeout=10 \
        -rss_limit_mb=2048 -print_final_stats=1 "corpus/$t" > "../fuzz-logs/$t.log" 2>&1
    echo "$t exit $?"
done
