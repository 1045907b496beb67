/* libFuzzer target: one adapter's parser (FUZZ_ADAPTER, set by the Makefile
 * for every adapter in the registry). A line adapter is fed the input as
 * lines, with the parse state carried across them and through its
 * checkpoint encoding, as the tail reader does; a document adapter the
 * input as one document, then again with the known prefix it reported, as
 * a rewrite that kept it. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "adapter.h"
#include "registry.h"

#ifndef FUZZ_ADAPTER
#error "build with -DFUZZ_ADAPTER='\"id\"'"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_rows(const struct row_batch *out)
{
        for (size_t i = 0; i < out->n; i++) {
                uint8_t buf[ROW_ENCODED_MAX];
                size_t rl;
                struct usage_row back;
                if (row_encode(&out->rows[i], buf, sizeof(buf), &rl) == 0)
                        (void)row_decode(buf, rl, &back);
        }
}

static void roundtrip_state(struct parse_state *ps)
{
        uint8_t enc[PS_ENCODED_MAX];
        size_t len;
        struct parse_state back;

        if (parse_state_encode(ps, enc, sizeof(enc), &len) == 0) {
                if (parse_state_decode(enc, len, &back) == 0)
                        *ps = back;
                else
                        __builtin_trap();
        }
}

static void fuzz_document(const struct adapter *a, const struct source_ctx *ctx, const uint8_t *data,
                          size_t size)
{
        struct parse_state ps = { 0 };
        struct row_batch out = { 0 };
        char *doc = malloc(size + 1);
        size_t known = 0;

        if (!doc)
                return;
        memcpy(doc, data, size);
        doc[size] = 0;
        for (int pass = 0; pass < 2; pass++) {
                int r = a->parse_document(ctx, &ps, doc, size, &known, &out);
                if (r == PARSE_OK && known > size)
                        __builtin_trap(); /* a prefix longer than the document */
                if (r != PARSE_OK) {
                        if (r == PARSE_INCOMPLETE && out.n)
                                __builtin_trap(); /* incomplete leaves no rows */
                        known = 0;
                }
                check_rows(&out);
                row_batch_clear(&out);
                roundtrip_state(&ps);
        }
        row_batch_free(&out);
        free(doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        const struct adapter *a = registry_find(FUZZ_ADAPTER);
        struct source_ctx ctx = { .adapter = a, .path = "/fuzz/session.jsonl", .root_path = "/fuzz" };
        struct parse_state ps = { 0 };
        struct row_batch out = { 0 };
        const char *p = (const char *)data, *end = p + size;

        if (a && a->parse_document)
                fuzz_document(a, &ctx, data, size);
        if (!a || !a->parse_line)
                return 0;
        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t)(end - p));
                size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
                (void)a->parse_line(&ctx, &ps, p, n, &out);
                check_rows(&out);
                row_batch_clear(&out);
                roundtrip_state(&ps); /* the state survives a checkpoint round trip */
                p += n + (nl ? 1 : 0);
        }
        row_batch_free(&out);
        return 0;
}
