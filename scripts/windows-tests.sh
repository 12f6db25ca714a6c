#!/usr/bin/env bash
# The Windows build, checked under Wine (see docs/windows.md): clippy on the Windows build,
# then cross-builds iogauge.exe with mingw, runs the library's unit tests under Wine
# (scripts/wine-run.sh is cargo's runner for the target), then scripts/windows_check.py's
# command lines, outputs and safety checks on the exe. Needs the x86_64-pc-windows-gnu target,
# gcc-mingw-w64-x86-64 and wine64, which scripts/test-deps.sh installs; where one is missing it
# says so and exits 1 (CI needs them).
set -euo pipefail
cd "$(dirname "$0")/.."
target=x86_64-pc-windows-gnu
missing=()
rustup target list --installed 2>/dev/null | grep -qx "$target" || missing+=("rustup target $target")
command -v x86_64-w64-mingw32-gcc >/dev/null || missing+=(gcc-mingw-w64-x86-64)
command -v wine64 >/dev/null || [ -x /usr/lib/wine/wine64 ] || missing+=(wine64)
if ((${#missing[@]})); then
    echo "windows-tests: missing ${missing[*]} (scripts/test-deps.sh installs them)" >&2
    exit 1
fi
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER="$PWD/scripts/wine-run.sh"
# Clippy on the Windows half too: the Linux build's clippy never compiles it. The library's
# unit tests as well (--profile test); tests/cli is Linux's (it runs Linux programs).
cargo clippy --target "$target" --lib --bins -- -D warnings
cargo clippy --target "$target" --lib --bins --profile test -- -D warnings
cargo build --target "$target"
cargo test --target "$target" --lib
python3 scripts/windows_check.py "target/$target/debug/iogauge.exe"
