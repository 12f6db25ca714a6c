#!/bin/bash
# fio's own regression scripts, run unchanged against iogauge's fio mode (a link named `fio`
# to the iogauge binary) and, with --with-fio, against the real fio too; prints per suite
# passed/total for each.
#
#   scripts/fio-tests.sh [--with-fio] [--check] [--only SUITE]
#
#   --with-fio   run the real fio as well (about 15 minutes; fio 3.33 hangs on its offload
#                tests t0010 and t0013 here, so each fio test is given a timeout)
#   --check      fail (exit 1) when iogauge passes fewer than scripts/fio-tests-floor says
#                for a suite, or (with --with-fio) fewer than the real fio
#   --only SUITE one of: jobs, steadystate, readonly, scripts
#   --source     print the directory of fio's source (fetching it if needed) and exit;
#                bench/ceiling.py builds fio's t/io_uring from a copy of it
#
# The suites: `jobs`, t/run-fio-tests.py's job-file tests t0001-t0026 (t0009 needs 4 CPUs
# and is skipped with fio's own reason on fewer); `steadystate`, t/steadystate_tests.py;
# `readonly`, t/readonly.py; `scripts`, t/strided.py, t/latency_percentiles.py,
# t/jsonplus2csv_test.py and t/log_compression.py as run-fio-tests.py runs them
# (t/latency_percentiles.py with a longer limit than that runner's, see latency_percentiles).
#
# fio's source is the one Debian packages for this machine's fio (`apt-get source fio`,
# after adding a deb-src entry with the archive's key when there is none), kept under
# $FIO_SRC_CACHE (default ~/.cache/iogauge/fio-src); its t/ is used as shipped.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CACHE=${FIO_SRC_CACHE:-$HOME/.cache/iogauge/fio-src}
WITH_FIO=0
CHECK=0
ONLY=""
SOURCE_ONLY=0
while [ $# -gt 0 ]; do
    case "$1" in
    --with-fio) WITH_FIO=1 ;;
    --check) CHECK=1 ;;
    --source) SOURCE_ONLY=1 ;;
    --only)
        ONLY=$2
        shift
        ;;
    *)
        echo "fio-tests.sh: $1: unknown argument (--with-fio, --check, --only SUITE, --source)" >&2
        exit 2
        ;;
    esac
    shift
done

# fio's source, as Debian ships it for the installed fio.
fio_source() {
    local dir
    dir=$(find "$CACHE" -mindepth 1 -maxdepth 1 -type d -name 'fio-*' 2>/dev/null | sort | tail -1)
    if [ -n "$dir" ] && [ -f "$dir/t/run-fio-tests.py" ]; then
        echo "$dir"
        return
    fi
    mkdir -p "$CACHE"
    if ! grep -rqs '^Types: deb-src' /etc/apt/sources.list.d/ && ! grep -qs '^deb-src' /etc/apt/sources.list; then
        local sources=/etc/apt/sources.list.d/debian.sources
        [ -f "$sources" ] || { echo "fio-tests.sh: no deb-src entry and no $sources to copy one from" >&2; exit 1; }
        # The first deb entry's URIs, suites and key (the main archive), for sources.
        python3 - "$sources" >/etc/apt/sources.list.d/iogauge-deb-src.sources <<'EOF'
import sys
for block in open(sys.argv[1]).read().split("\n\n"):
    lines = [l for l in block.splitlines() if not l.startswith("#")]
    if "Types: deb" in lines and not any("security" in l for l in lines):
        print("\n".join("Types: deb-src" if l == "Types: deb" else l for l in lines))
        break
EOF
        apt-get update -qq >&2
    fi
    (cd "$CACHE" && apt-get source --download-only fio >&2 2>/dev/null)
    local orig
    orig=$(ls "$CACHE"/fio_*.orig.tar.* 2>/dev/null | grep -v '\.asc$' | sort | tail -1)
    if [ -z "$orig" ] || ! tar -xf "$orig" -C "$CACHE" >&2; then
        echo "fio-tests.sh: could not get fio's source (apt-get source fio) into $CACHE" >&2
        exit 1
    fi
    dir=$(find "$CACHE" -mindepth 1 -maxdepth 1 -type d -name 'fio-*' | sort | tail -1)
    # run-fio-tests.py reads fio's build configuration for its requirements; Debian's fio is
    # built with libaio.
    [ -f "$dir/config-host.h" ] || echo "#define CONFIG_LIBAIO" >"$dir/config-host.h"
    echo "$dir"
}

SRC=$(fio_source) || exit 1
[ -f "$SRC/t/run-fio-tests.py" ] || { echo "fio-tests.sh: no fio source" >&2; exit 1; }
if [ "$SOURCE_ONLY" = 1 ]; then
    echo "$SRC"
    exit 0
fi
# fio's scripts run under the python that scripts/test-deps.sh gave scipy.
TESTS_VENV=${IOGAUGE_FIO_TESTS_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/iogauge/fio-tests-venv}
if [ -x "$TESTS_VENV/bin/python3" ]; then
    export PATH="$TESTS_VENV/bin:$PATH"
else
    echo "fio-tests.sh: no $TESTS_VENV (scripts/test-deps.sh makes it): t/steadystate_tests.py needs scipy" >&2
fi
cargo build --release --quiet --manifest-path "$ROOT/Cargo.toml"
WORK=$(mktemp -d /tmp/iogauge-fio-tests.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$WORK/bin"
ln -s "$ROOT/target/release/iogauge" "$WORK/bin/fio"

JOB_TESTS=$(seq 1 26)
# run-fio-tests.py's script tests; 1010, t/latency_percentiles.py, is run on its own below.
SCRIPT_TESTS="1006 1011 1012"

# t/latency_percentiles.py with the fio at $1, in $2/latency, as run-fio-tests.py runs it as
# its test 1010 — from a directory of its own, `-f FIO`, passed when it exits 0 with nothing
# on stderr — but given 1800 s where that runner gives 600: the script reads every I/O's
# latency log line by line, and its null-engine tests log as many lines as the engine makes
# I/Os (iogauge's 14.7 million a second here, fio 3.33's 2.95 million: 649 s for the script
# on 2026-12-02, a timeout under that runner). Appends "Test 1010 PASSED|FAILED" to
# $2/scripts.log; the logs (up to 12 GiB) are removed.
latency_percentiles() {
    local fio=$1 dir=$2/latency rc=0
    mkdir -p "$dir"
    (cd "$dir" && timeout 1800 python3 "$SRC/t/latency_percentiles.py" -f "$fio" \
        >"$dir/stdout" 2>"$dir/stderr") || rc=$?
    if [ "$rc" = 0 ] && [ ! -s "$dir/stderr" ]; then
        echo "Test 1010 PASSED" >>"$2/scripts.log"
    else
        echo "Test 1010 FAILED: exit $rc$([ "$rc" = 124 ] && echo ' (timeout, 1800 s)'), $(wc -c <"$dir/stderr") bytes on stderr, t/latency_percentiles.py" >>"$2/scripts.log"
        tail -n 20 "$dir/stdout" "$dir/stderr" >&2 || true
    fi
    rm -rf "$dir"
}

# Runs every suite with the fio at $1, labelled $2; writes "$2 SUITE passed total" lines.
run_suites() {
    local fio=$1 who=$2 out=$WORK/$2
    mkdir -p "$out"
    if [ -z "$ONLY" ] || [ "$ONLY" = jobs ]; then
        (cd "$out" && timeout 1500 python3 "$SRC/t/run-fio-tests.py" -r "$SRC" -f "$fio" \
            -a "$out/jobs" -o $JOB_TESTS >"$out/jobs.log" 2>&1 || true)
        python3 - "$out/jobs.log" "$who" <<'EOF'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
res = [re.match(r"Test (\d+) (PASSED|FAILED|SKIPPED)", l) for l in lines]
res = [m for m in res if m]
ran = [m for m in res if m.group(2) != "SKIPPED"]
print(sys.argv[2], "jobs", sum(m.group(2) == "PASSED" for m in ran), len(ran))
for m in res:
    if m.group(2) == "FAILED" or (m.group(2) == "SKIPPED" and "User request" not in m.string):
        print("  #", sys.argv[2], "t%04d" % int(m.group(1)), m.group(2), file=sys.stderr)
EOF
    fi
    if [ -z "$ONLY" ] || [ "$ONLY" = steadystate ]; then
        (cd "$out" && timeout 900 python3 "$SRC/t/steadystate_tests.py" "$fio" >"$out/ss.log" 2>&1 || true)
        local p f
        p=$(grep -c '^PASSED' "$out/ss.log" || true)
        f=$(grep -c '^FAILED' "$out/ss.log" || true)
        echo "$who steadystate $p $((p + f))"
    fi
    if [ -z "$ONLY" ] || [ "$ONLY" = readonly ]; then
        (cd "$out" && timeout 600 python3 "$SRC/t/readonly.py" -f "$fio" >"$out/ro.log" 2>&1 || true)
        p=$(grep -c '^Test [0-9]* PASSED' "$out/ro.log" || true)
        f=$(grep -c '^Test [0-9]* FAILED' "$out/ro.log" || true)
        echo "$who readonly $p $((p + f))"
    fi
    if [ -z "$ONLY" ] || [ "$ONLY" = scripts ]; then
        (cd "$out" && timeout 1500 python3 "$SRC/t/run-fio-tests.py" -r "$SRC" -f "$fio" \
            -a "$out/scripts" -o $SCRIPT_TESTS >"$out/scripts.log" 2>&1 || true)
        latency_percentiles "$fio" "$out"
        p=$(grep -cE '^Test [0-9]+ PASSED' "$out/scripts.log" || true)
        f=$(grep -cE '^Test [0-9]+ FAILED' "$out/scripts.log" || true)
        echo "$who scripts $p $((p + f))"
        grep -E '^Test [0-9]+ FAILED' "$out/scripts.log" | sed "s/^/  # $who /" >&2 || true
    fi
}

RESULTS=$WORK/results
run_suites "$WORK/bin/fio" iogauge | tee "$RESULTS"
if [ "$WITH_FIO" = 1 ]; then
    run_suites "$(command -v fio)" fio | tee -a "$RESULTS"
fi

echo
printf '%-12s %-16s %-16s\n' suite iogauge fio
for s in jobs steadystate readonly scripts; do
    i=$(awk -v s=$s '$1 == "iogauge" && $2 == s {print $3 "/" $4}' "$RESULTS")
    f=$(awk -v s=$s '$1 == "fio" && $2 == s {print $3 "/" $4}' "$RESULTS")
    [ -n "$i$f" ] && printf '%-12s %-16s %-16s\n' "$s" "${i:--}" "${f:--}"
done

if [ "$CHECK" = 1 ]; then
    bad=0
    while read -r suite floor; do
        [ -z "$suite" ] || [ "${suite:0:1}" = "#" ] && continue
        [ -n "$ONLY" ] && [ "$ONLY" != "$suite" ] && continue
        got=$(awk -v s="$suite" '$1 == "iogauge" && $2 == s {print $3}' "$RESULTS")
        if [ -z "$got" ] || [ "$got" -lt "$floor" ]; then
            echo "fio-tests: $suite: iogauge passed ${got:-none}, fewer than the floor $floor (scripts/fio-tests-floor)" >&2
            bad=1
        fi
        fio_got=$(awk -v s="$suite" '$1 == "fio" && $2 == s {print $3}' "$RESULTS")
        if [ -n "$fio_got" ] && [ "${got:-0}" -lt "$fio_got" ]; then
            echo "fio-tests: $suite: iogauge passed ${got:-0}, fewer than the real fio's $fio_got" >&2
            bad=1
        fi
    done <"$ROOT/scripts/fio-tests-floor"
    exit $bad
fi
