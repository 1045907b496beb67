/* libFuzzer target: one adapter's line parser (FUZZ_ADAPTER, set by the
 * Makefile for every adapter in the registry) fed the input as lines, with
 * the parse state carried across them and through its checkpoint encoding,
 * as the tail reader does. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "adapter.h"
#include "registry.h"

#ifndef FUZZ_ADAPTER
#error "build with -DFUZZ_ADAPTER='\"id\"'"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const struct adapter *a = registry_find(FUZZ_ADAPTER);
        struct source_ctx ctx = { .adapter = a, .path = "/fuzz/session.jsonl", .root_path = "/fuzz" };
        struct parse_state ps = { 0 };
        struct row_batch out = { 0 };
        const char *p = (const char *)data, *end = p + size;

        if (!a || !a->parse_line)
                return 0;
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
                uint8_t enc[PS_ENCODED_MAX];
                size_t len;

                (void)a->parse_line(&ctx, &ps, p, n, &out);
                for (size_t i = 0; i < out.n; i++) {
                        uint8_t buf[ROW_ENCODED_MAX];
                        size_t rl;
                        struct usage_row back;
                        if (row_encode(&out.rows[i], buf, sizeof(buf), &rl) == 0)
                                (void)row_decode(buf, rl, &back);
                }
                row_batch_clear(&out);
                /* the state survives a checkpoint round trip */
                if (parse_state_encode(&ps, enc, sizeof(enc), &len) == 0) {
                        struct parse_state back;
                        if (parse_state_decode(enc, len, &back) == 0)
                                ps = back;
                        else
                                __builtin_trap();
                }
                p += n + (nl ? 1 : 0);
        }
        row_batch_free(&out);
        return 0;
}
