/* bytescan_pair against a byte-by-byte reference, and bytescan_find
 * against memmem: every length from 0 to 200 and every position of the
 * pair or needle (the vector loop's edges: 16 and 32 bytes, the last byte,
 * a match split across a step), random text with and without it, decoys
 * that match the bytes compared first but not the rest. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json/bytescan.h"
#include "tap.h"

static const char *naive(const char *p, const char *end, char a, char b1, char b2)
{
        for (; end - p > 1; p++)
                if (p[0] == a && (p[1] == b1 || p[1] == b2))
                        return p;
        return NULL;
}

int main(void)
{
        char buf[512];
        int bad = 0, cases = 0;

        srand(7);
        /* past 3 x 128: the 128-byte steps, each of their 32-byte blocks,
         * and the steps of 32 and the bytes after them */
        for (int len = 0; len <= 420; len++) {
                for (int at = -1; at < len; at++) {
                        for (int i = 0; i < len; i++)
                                buf[i] = "ab\"q um\"x"[rand() % 9] == '"' ? 'z' : "abcq xyz"[rand() % 8];
                        /* decoys: quotes followed by neither */
                        for (int i = 0; i + 1 < len; i += 7)
                                buf[i] = '"';
                        if (at >= 0) {
                                buf[at] = '"';
                                if (at + 1 < len)
                                        buf[at + 1] = at % 2 ? 'u' : 'm';
                        }
                        const char *want = naive(buf, buf + len, '"', 'u', 'm');
                        const char *got = bytescan_pair(buf, buf + len, '"', 'u', 'm');
                        cases++;
                        if (want != got) {
                                if (bad++ < 5)
                                        printf("# len %d at %d: want %td got %td\n", len, at,
                                               want ? want - buf : -1, got ? got - buf : -1);
                        }
                }
        }
        ok(bad == 0, "bytescan_pair equals the byte-by-byte scan in %d cases (%d differ)", cases, bad);

        static const char *const needles[] = {"\"", "ab", "\"u\"", "\"tokens\"", "\"usageMetadata\"",
                                              "\"qwen-code.api_response\"", "\"session."};
        bad = cases = 0;
        for (size_t ni = 0; ni < sizeof(needles) / sizeof(needles[0]); ni++) {
                const char *nd = needles[ni];
                size_t m = strlen(nd);
                for (int len = 0; len <= 200; len++) {
                        for (int at = -1; at < len; at++) {
                                for (int i = 0; i < len; i++)
                                        buf[i] = "abcq \"xyz"[rand() % 9];
                                /* decoys: the needle's 2nd and 2nd-last bytes without the rest */
                                for (int i = 0; m >= 4 && i + (int)m <= len; i += 11) {
                                        buf[i + 1] = nd[1];
                                        buf[i + (int)m - 2] = nd[m - 2];
                                }
                                if (at >= 0 && at + (int)m <= len)
                                        memcpy(buf + at, nd, m);
                                const char *want = memmem(buf, (size_t)len, nd, m);
                                const char *got = bytescan_find(buf, (size_t)len, nd, m);
                                cases++;
                                if (want != got && bad++ < 5)
                                        printf("# needle %s len %d at %d: want %td got %td\n", nd, len, at,
                                               want ? want - buf : -1, got ? got - buf : -1);
                        }
                }
        }
        ok(bad == 0, "bytescan_find equals memmem in %d cases (%d differ)", cases, bad);
        is_int(bytescan_pair(buf, buf, '"', 'u', 'm') == NULL, 1, "an empty range: NULL");
        strcpy(buf, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"");
        ok(bytescan_pair(buf, buf + strlen(buf), '"', 'u', 'm') == NULL, "a quote as the last byte: no pair");
        return tap_done();
}
