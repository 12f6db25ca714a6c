#!/bin/sh
# Runs a Windows program of iogauge's (iogauge.exe, a test binary) under Wine: cargo's target
# runner for x86_64-pc-windows-gnu (see README, "Windows").
#
# The Wine prefix lives in target/wine (made once, ~10 s; IOGAUGE_WINEPREFIX overrides), and
# holds the ProcessPrng shim (scripts/wine/processprng.c: why it is needed is said there),
# built with mingw when missing or older than its source. Wine's own noise is kept off
# stderr unless WINEDEBUG is set.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
prefix=${IOGAUGE_WINEPREFIX:-$root/target/wine}
wine=$(command -v wine64 || echo /usr/lib/wine/wine64)
[ -x "$wine" ] || { echo "wine-run.sh: wine64 not found (apt-get install wine64)" >&2; exit 2; }
export WINEPREFIX="$prefix" WINEDEBUG="${WINEDEBUG:--all}"
export WINEDLLOVERRIDES="bcryptprimitives=n,b${WINEDLLOVERRIDES:+;$WINEDLLOVERRIDES}"
dll="$prefix/drive_c/windows/system32/bcryptprimitives.dll"
if [ ! -f "$prefix/system.reg" ]; then
    mkdir -p "$prefix"
    "$wine" wineboot -i >/dev/null 2>&1 || true
fi
if [ ! -f "$dll" ] || [ "$here/wine/processprng.c" -nt "$dll" ]; then
    x86_64-w64-mingw32-gcc -O2 -shared -o "$dll.tmp" "$here/wine/processprng.c" \
        "$here/wine/processprng.def" -ladvapi32
    mv "$dll.tmp" "$dll"
fi
exec "$wine" "$@"
