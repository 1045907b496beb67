/* libFuzzer target: an OpenClaw archive record stream (a deleted or reset
 * session's lines, or cold-storage restore records), zstd or identity
 * bytes, through openclaw_archive_read_mem (adapters/openclaw/openclaw.h) as the
 * database and file sources call it. The first input byte chooses the
 * format (bit 0: cold), the encoding (bit 1: zstd) and a row budget (bits
 * 2-5); the rest is the archive. Read whole, and read again resumed at
 * that budget with the parse state carried through its checkpoint
 * encoding: when the whole read succeeds, the resumed one gives the same
 * rows in the same order. Archives that decode past DECODE_MAX are left to
 * the system tests (a 64 KiB input can expand to gigabytes). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "adapter.h"
#include "openclaw/openclaw.h"
#include "row.h"

#define DECODE_MAX (8u << 20)
#define RESUMES_MAX 100000

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Whether the zstd input decodes to at most DECODE_MAX bytes (or fails
 * before): the read's cost is then bounded. */
static int small_enough(const uint8_t *data, size_t size)
{
        ZSTD_DCtx *d = ZSTD_createDCtx();
        ZSTD_inBuffer in = {data, size, 0};
        static uint8_t sink[1 << 16];
        size_t total = 0;
        int ok = 1;

        if (!d)
                abort();
        while (in.pos < in.size) {
                ZSTD_outBuffer o = {sink, sizeof(sink), 0};
                size_t before = in.pos;
                if (ZSTD_isError(ZSTD_decompressStream(d, &o, &in)))
                        break;
                total += o.pos;
                if (total > DECODE_MAX) {
                        ok = 0;
                        break;
                }
                if (in.pos == before && o.pos == 0)
                        break;
        }
        ZSTD_freeDCtx(d);
        return ok;
}

static int same_rows(const struct row_batch *a, const struct row_batch *b)
{
        if (a->n != b->n)
                return 0;
        for (size_t i = 0; i < a->n; i++) {
                const struct usage_row *x = &a->rows[i], *y = &b->rows[i];
                if (memcmp(&x->key, &y->key, sizeof(x->key)) != 0 || x->input != y->input ||
                    x->output != y->output || x->cost_nano != y->cost_nano || x->time_ms != y->time_ms)
                        return 0;
        }
        return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct source_ctx ctx = {.adapter = &adapter_openclaw, .path = "/fuzz/state.sqlite",
                                 .root_path = "/fuzz"};
        struct parse_state ps = {0};
        struct row_batch whole = {0}, resumed = {0};
        enum oc_archive_format format;
        bool zstd;
        size_t budget;
        int r;

        if (size < 1)
                return 0;
        format = data[0] & 1 ? OC_ARCHIVE_COLD : OC_ARCHIVE_JSONL;
        zstd = data[0] & 2;
        budget = (data[0] >> 2) & 15;
        data++, size--;
        if (zstd && !small_enough(data, size))
                return 0;
        ctx.source_hash = openclaw_origin_hash(ctx.path, format);

        struct oc_archive_read a = {.ctx = &ctx, .ps = &ps, .format = format, .out = &whole};
        r = openclaw_archive_read_mem(&a, zstd, data, size);
        if (r < 0 && whole.n != 0)
                __builtin_trap(); /* no rows from an archive that does not decode */
        if (r == 0 && budget > 0) {
                uint64_t skip = 0;
                memset(&ps, 0, sizeof(ps));
                for (int k = 0; k < RESUMES_MAX; k++) {
                        struct oc_archive_read b = {.ctx = &ctx, .ps = &ps, .format = format,
                                                    .skip = skip, .max_rows = budget, .out = &resumed};
                        size_t n0 = resumed.n;
                        r = openclaw_archive_read_mem(&b, zstd, data, size);
                        if (r < 0)
                                __builtin_trap(); /* the whole read succeeded */
                        if (r == 0)
                                break;
                        if (resumed.n - n0 < budget || b.consumed <= skip)
                                __builtin_trap(); /* stopped early without its rows, or no progress */
                        skip = b.consumed;
                        /* the state goes through its checkpoint, as between slices */
                        uint8_t enc[PS_ENCODED_MAX];
                        size_t len;
                        struct parse_state back;
                        if (parse_state_encode(&ps, enc, sizeof(enc), &len) != 0 ||
                            parse_state_decode(enc, len, &back) != 0)
                                __builtin_trap();
                        ps = back;
                }
                if (r != 0 || !same_rows(&whole, &resumed))
                        __builtin_trap(); /* a resumed read gives other rows */
        }
        row_batch_free(&whole);
        row_batch_free(&resumed);
        return 0;
}
