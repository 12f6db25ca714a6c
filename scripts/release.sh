#!/usr/bin/env bash
# Builds iogauge's release: for each Linux target, a static binary (glibc linked in with
# +crt-static, so it runs on any Linux of its architecture), stripped, its debug info in a
# file of its own (linked back with .gnu_debuglink, for gdb and perf), a tar.gz with the
# README and licences; for Windows, iogauge.exe (mingw's, importing only DLLs every Windows
# 8 and later has) stripped the same way, in a zip with the README, the licences and
# docs/windows.md; and SHA-256 sums of everything.
#
#   scripts/release.sh                 x86_64, aarch64 and windows into target/dist/
#   scripts/release.sh x86_64          one target (x86_64, aarch64 or windows)
#   scripts/release.sh --check         x86_64 only, then checks what users get: statically
#                                      linked, stripped, under 8 MiB, and `--version` runs
#                                      (CI runs this with windows too: its exe stripped, under
#                                      8 MiB, importing only system DLLs, `--version` under Wine)
#
# aarch64 is cross-built with Debian's cross linker (gcc-aarch64-linux-gnu,
# libc6-dev-arm64-cross): installed here when missing and running as root with apt-get, else
# named; windows with mingw-w64 (scripts/test-deps.sh installs it, and Wine for the check).
# `rustup target add` fetches each target's standard library.
set -euo pipefail
cd "$(dirname "$0")/.."

check=0
arches=()
for a in "$@"; do
    case "$a" in
        --check) check=1 ;;
        x86_64 | aarch64 | windows) arches+=("$a") ;;
        *)
            echo "release.sh: unknown argument '$a': expected --check, x86_64, aarch64 or windows" >&2
            exit 2
            ;;
    esac
done
if ((check)) && ((${#arches[@]} == 0)); then
    arches=(x86_64)
elif ((${#arches[@]} == 0)); then
    arches=(x86_64 aarch64 windows)
fi

version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n 1)
out="${IOGAUGE_DIST_DIR:-target/dist}"
max_bytes=$((8 << 20))

# Debian's cross tools for a foreign architecture, installed when we can.
need_cross() {
    local pkgs=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross)
    command -v aarch64-linux-gnu-gcc >/dev/null && [ -d /usr/aarch64-linux-gnu/lib ] && return 0
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "release.sh: installing ${pkgs[*]} (apt)"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${pkgs[@]}" >/dev/null && return 0
    fi
    echo "release.sh: aarch64 needs ${pkgs[*]} (Debian's cross linker); install them" >&2
    exit 1
}

build() {
    local arch=$1 triple objcopy
    triple="$arch-unknown-linux-gnu"
    objcopy=objcopy
    if [ "$arch" = aarch64 ] && [ "$(uname -m)" != aarch64 ]; then
        need_cross
        export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
        objcopy=aarch64-linux-gnu-objcopy
    fi
    if command -v rustup >/dev/null && ! rustup target list --installed | grep -qx "$triple"; then
        rustup target add "$triple"
    fi
    # With --target, RUSTFLAGS reach iogauge's code only, not build scripts. A static PIE
    # relocates itself as it starts (glibc's own start code, linked in: the system it runs on
    # plays no part); its relative relocations packed (DT_RELR, binutils 2.38 and glibc 2.36,
    # both linked in here) take 2 KiB where plain RELA took 172 KiB (2026-12-08), keeping
    # ASLR and the binary under its cap.
    RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static -C link-arg=-Wl,-z,pack-relative-relocs" \
        cargo build --release --locked --target "$triple"
    local name="iogauge-$version-$arch-linux"
    local stage="$out/$name"
    rm -rf "$stage"
    mkdir -p "$stage"
    local built="target/$triple/release/iogauge"
    "$objcopy" --only-keep-debug "$built" "$out/$name.debug"
    "$objcopy" --strip-all --add-gnu-debuglink="$out/$name.debug" "$built" "$stage/iogauge"
    cp README.md LICENSE-MIT LICENSE-APACHE "$stage/"
    tar -C "$out" -czf "$out/$name.tar.gz" "$name"
    echo "release.sh: $out/$name.tar.gz ($(stat -c %s "$stage/iogauge") bytes stripped)"
}

# The Windows exe, cross-built with mingw: stripped, its debug info beside it (linked back
# with .gnu_debuglink, which gdb and WinDbg's DWARF tools follow), zipped (Python's zipfile:
# no zip program needed).
build_windows() {
    local triple=x86_64-pc-windows-gnu
    if ! command -v x86_64-w64-mingw32-gcc >/dev/null; then
        echo "release.sh: windows needs mingw-w64 (gcc-mingw-w64-x86-64; scripts/test-deps.sh installs it)" >&2
        exit 1
    fi
    if command -v rustup >/dev/null && ! rustup target list --installed | grep -qx "$triple"; then
        rustup target add "$triple"
    fi
    cargo build --release --locked --target "$triple"
    local name="iogauge-$version-x86_64-windows"
    local stage="$out/$name"
    rm -rf "$stage" "$out/$name.zip"
    mkdir -p "$stage"
    local built="target/$triple/release/iogauge.exe"
    x86_64-w64-mingw32-objcopy --only-keep-debug "$built" "$out/$name.debug"
    x86_64-w64-mingw32-objcopy --strip-all --add-gnu-debuglink="$out/$name.debug" "$built" \
        "$stage/iogauge.exe"
    cp README.md LICENSE-MIT LICENSE-APACHE docs/windows.md "$stage/"
    (cd "$out" && python3 -m zipfile -c "$name.zip" "$name")
    echo "release.sh: $out/$name.zip ($(stat -c %s "$stage/iogauge.exe") bytes stripped)"
}

# The DLLs a Windows build may import: those every Windows 8 and later has.
windows_dlls='^(kernel32|ntdll|msvcrt|advapi32|bcryptprimitives|api-ms-win-core-synch-l1-2-0)\.dll$'

# What Windows users get: a stripped exe under the size cap, importing system DLLs only, that
# runs (under Wine here).
verify_windows() {
    local exe="$out/iogauge-$version-x86_64-windows/iogauge.exe" size dll said
    if x86_64-w64-mingw32-objdump -h "$exe" | grep -qE ' \.debug_'; then
        echo "release.sh: $exe still has debug info: not stripped" >&2
        exit 1
    fi
    while read -r dll; do
        if ! grep -qiE "$windows_dlls" <<<"$dll"; then
            echo "release.sh: $exe imports $dll, which Windows does not ship" >&2
            exit 1
        fi
    done < <(x86_64-w64-mingw32-objdump -p "$exe" | sed -n 's/^[[:space:]]*DLL Name: //p')
    size=$(stat -c %s "$exe")
    if ((size > max_bytes)); then
        echo "release.sh: $exe is $size bytes, over the $max_bytes-byte cap" >&2
        exit 1
    fi
    said=$(scripts/wine-run.sh "$exe" --version | tr -d '\r')
    if [ "$said" != "iogauge $version" ]; then
        echo "release.sh: $exe --version under Wine says '$said', expected 'iogauge $version'" >&2
        exit 1
    fi
    if ! python3 -m zipfile -l "$out/iogauge-$version-x86_64-windows.zip" | grep -q 'iogauge.exe'; then
        echo "release.sh: the zip holds no iogauge.exe" >&2
        exit 1
    fi
    echo "release.sh: windows check passed: stripped, $size bytes, system DLLs only, '$said'"
}

# What users get: a static, stripped binary under the size cap that runs.
verify() {
    local bin="$out/iogauge-$version-x86_64-linux/iogauge" size
    if readelf -lW "$bin" | grep -q 'INTERP'; then
        echo "release.sh: $bin asks for a dynamic loader: not static" >&2
        exit 1
    fi
    if readelf -dW "$bin" | grep -q 'NEEDED'; then
        echo "release.sh: $bin needs shared libraries: not static" >&2
        exit 1
    fi
    if readelf -SW "$bin" | grep -qE '\.symtab|\.debug_(info|line|str|abbrev|ranges)'; then
        echo "release.sh: $bin still has symbols or debug info: not stripped" >&2
        exit 1
    fi
    size=$(stat -c %s "$bin")
    if ((size > max_bytes)); then
        echo "release.sh: $bin is $size bytes, over the $max_bytes-byte cap" >&2
        exit 1
    fi
    local said
    said=$("$bin" --version)
    if [ "$said" != "iogauge $version" ]; then
        echo "release.sh: $bin --version says '$said', expected 'iogauge $version'" >&2
        exit 1
    fi
    echo "release.sh: check passed: static, stripped, $size bytes, '$said'"
}

mkdir -p "$out"
for a in "${arches[@]}"; do
    case "$a" in
        windows) build_windows ;;
        *) build "$a" ;;
    esac
done
(shopt -s nullglob && cd "$out" && sha256sum -- *.tar.gz *.zip *.debug >SHA256SUMS)
echo "release.sh: sums in $out/SHA256SUMS"
if ((check)); then
    for a in "${arches[@]}"; do
        case "$a" in
            x86_64) verify ;;
            windows) verify_windows ;;
        esac
    done
fi
