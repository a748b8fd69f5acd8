/* Wine 8 (Debian 12's) has no bcryptprimitives.dll, whose ProcessPrng the Rust standard library
   takes its random numbers from on Windows (Wine 9 has it). This stand-in, put beside the test
   binaries only, answers it with BCryptGenRandom, which Wine 8 has. Nothing of it ships. */
#include <windows.h>
#include <bcrypt.h>

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    return BCryptGenRandom(NULL, data, (ULONG)len, BCRYPT_USE_SYSTEM_PREFERRED_RNG) == 0;
}
