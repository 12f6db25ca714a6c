/*
 * bcryptprimitives.dll's ProcessPrng for Wine 8, which lacks it.
 *
 * Rust's standard library (since 1.78) gets its random numbers from ProcessPrng in
 * bcryptprimitives.dll on Windows, and calls it as every program starts (HashMap's keys):
 * under Wine 8, whose bcryptprimitives.dll has no such export, every Rust program exits at
 * once with code 53. This one function, on RtlGenRandom (advapi32's SystemFunction036),
 * is all iogauge's Windows build needs from that DLL to run its tests under Wine.
 * scripts/wine-run.sh builds it with mingw and puts it in the Wine prefix; real Windows
 * (8 and later) has its own.
 */
#include <windows.h>
#include <ntsecapi.h>

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len) {
        ULONG n = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!RtlGenRandom(data, n))
            return FALSE;
        data += n;
        len -= n;
    }
    return TRUE;
}
