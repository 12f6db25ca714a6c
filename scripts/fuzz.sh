#!/usr/bin/env bash
# Fuzzes the job-file parser, the command line's value parsers (and the resolver behind
# both), the sweep's axes and grid, the verify state journal's reader, and traces (decoding,
# their figures, and what replay and predict work out from them) for a bounded time each:
# any input must give a request or an error, never a panic. Seeds: fuzz/seeds/README.md.
# Usage: scripts/fuzz.sh [SECONDS] (default 60, per target).
#        scripts/fuzz.sh --build: only builds the targets (CI does it first: a change to
#        iogauge's API that breaks a target fails in minutes, not after the long steps; the
#        run later reuses the build).
# cargo-fuzz needs a nightly toolchain; without one, or without cargo-fuzz, it prints SKIP
# with the reason and exits 0 (scripts/test-deps.sh installs cargo-fuzz).
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-60}"
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "SKIP fuzz: cargo-fuzz is not installed (scripts/test-deps.sh installs it)"
    exit 0
fi
if ! cargo +nightly --version >/dev/null 2>&1; then
    echo "SKIP fuzz: no nightly toolchain (cargo-fuzz needs one: rustup toolchain install nightly)"
    exit 0
fi
if [ "$secs" = --build ]; then
    cargo +nightly fuzz build
    exit
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for target in jobfile cli sweep state trace; do
    echo "fuzz $target: ${secs} s"
    # Committed seeds (fuzz/seeds/TARGET: for the trace, real recordings' bodies, so the
    # fuzzer starts from footers that name threads, wake-ups and gaps) are read beside the
    # working corpus, which is not committed.
    corpus=(fuzz/corpus/"$target")
    mkdir -p "${corpus[0]}"
    [ -d fuzz/seeds/"$target" ] && corpus+=(fuzz/seeds/"$target")
    # The stats when it passes; the build's or the crash's own words when it does not.
    if ! cargo +nightly fuzz run "$target" "${corpus[@]}" -- -max_total_time="$secs" \
        -max_len=65536 -print_final_stats=1 >"$log" 2>&1; then
        tail -n 80 "$log"
        echo "fuzz $target: FAILED (the build failed or an input crashed it; above)"
        exit 1
    fi
    tail -n 5 "$log"
done
