/* Byte scans that run over every byte a scan reads, at the width the CPU
 * has (AVX2 picked at run time, else 16 bytes a step): finding where a
 * line could matter is most of the work of reading a history of long
 * user and tool-result lines. */
#pragma once

#include <stddef.h>

/* The first byte a in [p, end - 1) followed by b1 or b2, or NULL. */
const char *bytescan_pair(const char *p, const char *end, char a, char b1, char b2);
