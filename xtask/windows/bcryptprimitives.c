/* Stand-in for Windows' bcryptprimitives.dll, for Wine 8.0 only (it lacks the DLL).
 * Rust's std on Windows takes its random bytes from ProcessPrng; real Windows 10 and later
 * ship it, so this file is built only into the Wine prefix of `cargo xtask windows`, never
 * shipped. It forwards to RtlGenRandom (advapi32's SystemFunction036), which Wine has. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x10000000 ? 0x10000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk))
            return FALSE;
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
