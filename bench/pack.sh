#!/usr/bin/env bash
# Builds what the benches run into one folder, for a machine with no compiler, cargo or
# package archive (a server one may only copy files to): iogauge and bench/ceiling's loops
# (release builds; they need only the C library), and, statically linked, the C pread loop,
# fio (the source Debian ships for this machine's fio, configured with no optional library)
# and fio's t/io_uring. Copy the folder there with the checkout's bench/, then:
#
#   IOGAUGE_PREBUILT=DIR python3 bench/ceiling.py ...
#   IOGAUGE_PREBUILT=DIR python3 bench/jobs_scaling.py ...
#
# Usage: bench/pack.sh DIR
set -euo pipefail
DIR=${1:?usage: bench/pack.sh DIR}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$HOME/.cache/iogauge/fio-static
mkdir -p "$DIR"

cargo build --release --quiet --manifest-path "$ROOT/Cargo.toml"
cargo build --release --quiet --manifest-path "$ROOT/bench/ceiling/Cargo.toml"
cp "$ROOT/target/release/iogauge" "$ROOT/bench/ceiling/target/release/iogauge-ceiling" "$DIR/"
# The release profile keeps debug information (for perf); the copy need not carry it.
strip --strip-debug "$DIR/iogauge" "$DIR/iogauge-ceiling"
cc -O2 -static -o "$DIR/c-pread" "$ROOT/bench/ceiling/c/pread.c"

if [ ! -x "$BUILD/fio" ] || [ ! -x "$BUILD/t/io_uring" ]; then
    SRC=$("$ROOT/scripts/fio-tests.sh" --source)
    rm -rf "$BUILD"
    mkdir -p "$BUILD"
    # fio-tests.sh's copy carries a stand-in config-host.h; configure writes the real one.
    (cd "$SRC" && tar --exclude='config-host.*' -cf - .) | (cd "$BUILD" && tar -xf -)
    (cd "$BUILD" &&
        ./configure --build-static --disable-native --disable-numa --disable-rdma \
            --disable-rados --disable-rbd --disable-http --disable-gfapi --disable-pmem \
            --disable-libnfs --disable-xnvme --disable-libzbc --disable-dfs \
            --disable-tcmalloc >configure.log 2>&1 ||
        { tail -20 configure.log >&2; exit 1; })
    make -C "$BUILD" -j"$(nproc)" fio t/io_uring >"$BUILD/make.log" 2>&1 ||
        { tail -20 "$BUILD/make.log" >&2; exit 1; }
fi
cp "$BUILD/fio" "$DIR/fio"
cp "$BUILD/t/io_uring" "$DIR/t-io_uring"
git -C "$ROOT" rev-parse --short HEAD >"$DIR/COMMIT"
for f in "$DIR"/*; do
    [ -x "$f" ] && printf '%-16s %s\n' "$(basename "$f")" "$(file -b "$f" | cut -d, -f1-2)"
done
