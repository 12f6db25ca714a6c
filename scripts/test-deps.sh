#!/usr/bin/env bash
# Installs what the acceptance tests drive besides iogauge itself: fio (the yardstick and the
# source of fio-format JSON to compare with), fio-examples (fio's job files: the job-file
# compatibility corpus, read where Debian puts it and never copied here), Chromium (renders
# the HTML report headless), strace (the system calls the sync and record tests expect),
# sqlite3 (a program the record tests capture), blktrace (a block trace the import test
# captures from a loop device), fuse3
# (fusermount3, to mount the tests' fault-injecting file system), xfsprogs (mkfs.xfs: XFS
# offers atomic writes in software, which the atomic=1 tests need), OpenMPI and libclang (the
# mpi feature's build and its mpirun tests), mingw-w64, Wine and Rust's x86_64-pc-windows-gnu
# target (the Windows build and its tests under Wine), fio-plot (draws graphs from iogauge's
# JSON and logs) and cargo-fuzz (the job-file parser's fuzz target, scripts/fuzz.sh; needs a nightly toolchain) and
# scipy for fio's own test scripts (scripts/fio-tests.sh). Safe to run again: it installs only
# what is missing. fio-plot goes into a virtual environment in the user's cache, whose path
# the tests find on their own. Without root or network, it says what it could not install and
# the tests that need it print SKIP.
set -uo pipefail

venv="${IOGAUGE_FIO_PLOT_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/iogauge/fio-plot-venv}"
missing=()
command -v fio >/dev/null || missing+=(fio)
command -v strace >/dev/null || missing+=(strace)
# sqlite3: a real program whose I/O the record tests capture and compare with strace's view.
command -v sqlite3 >/dev/null || missing+=(sqlite3)
# blktrace: the block layer's trace of a loop device, which `trace import --blktrace` reads.
command -v blktrace >/dev/null || missing+=(blktrace)
command -v fusermount3 >/dev/null || missing+=(fuse3)
command -v mkfs.xfs >/dev/null || missing+=(xfsprogs)
[ -d /usr/share/doc/fio/examples ] || missing+=(fio-examples)
command -v chromium >/dev/null || missing+=(chromium)
python3 -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
# The mpi feature (--features mpi): OpenMPI, and libclang for the bindings' bindgen.
command -v mpirun >/dev/null || missing+=(openmpi-bin)
[ -e /usr/include/x86_64-linux-gnu/openmpi ] || [ -e /usr/lib/x86_64-linux-gnu/openmpi/include/mpi.h ] || missing+=(libopenmpi-dev)
compgen -G '/usr/lib/llvm-*/lib/libclang.so' >/dev/null || missing+=(libclang-dev)
# The Windows build (scripts/windows-tests.sh): mingw links iogauge.exe, Wine runs it.
command -v x86_64-w64-mingw32-gcc >/dev/null || missing+=(gcc-mingw-w64-x86-64)
command -v wine64 >/dev/null || [ -x /usr/lib/wine/wine64 ] || missing+=(wine64)
if ((${#missing[@]})); then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        # A fresh machine has no package lists yet.
        if ! compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null; then
            echo "test-deps: apt-get update (no package lists yet)"
            apt-get update -q >/dev/null || echo "test-deps: apt-get update failed" >&2
        fi
        echo "test-deps: installing ${missing[*]} (apt)"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null ||
            echo "test-deps: apt-get could not install ${missing[*]}" >&2
    else
        echo "test-deps: missing ${missing[*]} (needs root and apt-get)" >&2
    fi
fi
if [ ! -x "$venv/bin/fio-plot" ]; then
    echo "test-deps: installing fio-plot (PyPI) into $venv"
    python3 -m venv "$venv" && "$venv/bin/pip" install -q fio-plot ||
        echo "test-deps: could not install fio-plot" >&2
fi
# fio's own test scripts (scripts/fio-tests.sh) run with a python that has scipy
# (t/steadystate_tests.py imports it) and six (tools/fio_jsonplus_clat2csv, which
# t/jsonplus2csv_test.py runs).
tests_venv="${IOGAUGE_FIO_TESTS_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/iogauge/fio-tests-venv}"
if ! "$tests_venv/bin/python3" -c 'import scipy, six' 2>/dev/null; then
    echo "test-deps: installing scipy and six (PyPI) into $tests_venv, for fio's test scripts"
    python3 -m venv "$tests_venv" && "$tests_venv/bin/pip" install -q scipy six ||
        echo "test-deps: could not install scipy and six" >&2
fi
if ! command -v cargo-fuzz >/dev/null && ! [ -x "$HOME/.cargo/bin/cargo-fuzz" ]; then
    echo "test-deps: installing cargo-fuzz (crates.io)"
    cargo install -q --locked cargo-fuzz || echo "test-deps: could not install cargo-fuzz" >&2
fi
# Rust's Windows target, for the Windows build (scripts/windows-tests.sh).
if command -v rustup >/dev/null &&
    ! rustup target list --installed 2>/dev/null | grep -qx x86_64-pc-windows-gnu; then
    echo "test-deps: adding Rust's x86_64-pc-windows-gnu target (rustup)"
    rustup target add x86_64-pc-windows-gnu >/dev/null ||
        echo "test-deps: could not add the x86_64-pc-windows-gnu target" >&2
fi
exit 0
