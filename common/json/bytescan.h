/* Byte scans that run over every byte a scan reads, at the width the CPU
 * has (AVX2 picked at run time, else 16 bytes a step): finding where a
 * line could matter is most of the work of reading a history of long
 * user and tool-result lines. */
#pragma once

#include <stddef.h>

/* The first byte a in [p, end - 1) followed by b1 or b2, or NULL. */
const char *bytescan_pair(const char *p, const char *end, char a, char b1, char b2);

/* The first occurrence of needle (m bytes, m >= 1) in [p, p + n), or NULL:
 * memmem, with 32 positions a step (two of the needle's bytes compared at
 * once, the rest only where both match) when the CPU has AVX2. */
const char *bytescan_find(const char *p, size_t n, const char *needle, size_t m);
