/*
 * bcryptprimitives.dll for Wine 8: only ProcessPrng, which Go (1.24 and
 * later) windows binaries import at start-up to fill their random seed and
 * crypto/rand, and which Wine gained only in 9.x. Without it every Go
 * program dies before main with "bcryptprimitives.dll not found".
 *
 * It is built by `make test-windows` (tools/wine/run) with mingw and copied
 * into the test prefix's system32; it is a test harness part, never shipped.
 * ProcessPrng is documented as never failing; it draws on
 * advapi32!SystemFunction036 (RtlGenRandom), the OS generator Wine has.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T size)
{
	/* RtlGenRandom takes a 32-bit length; ProcessPrng a SIZE_T. */
	while (size > 0) {
		ULONG n = size > 0x40000000 ? 0x40000000 : (ULONG)size;
		if (!SystemFunction036(data, n))
			return FALSE;
		data += n;
		size -= n;
	}
	return TRUE;
}
