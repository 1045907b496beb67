/* Usage rows: content keys (xxh3-128 over tagged fields), the versioned
 * binary value stored in the ledger, and the growable batch adapters fill. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "binio.h"
#include "row.h"
#include "hash/xxh.h"

void row_set_str(char *dst, size_t cap, const char *src, size_t len)
{
        size_t n;

        if (cap == 0)
                return;
        if (!src)
                len = 0;
        else {
                const char *nul = memchr(src, 0, len);
                if (nul)
                        len = (size_t)(nul - src);
        }
        n = len < cap - 1 ? len : cap - 1;
        /* When cutting, never leave half a UTF-8 sequence: if the first byte
         * dropped is a continuation byte, drop back to its lead byte too. */
        if (n < len)
                while (n > 0 && ((unsigned char)src[n] & 0xC0) == 0x80)
                        n--;
        if (n)
                memcpy(dst, src, n);
        dst[n] = 0;
}

/* Every field is tagged and length-prefixed, so no two different field
 * lists hash the same byte stream: ("ab","c") != ("a","bc"), a string
 * differs from bytes, NULL differs from "". */
enum { TAG_FORMAT = 'F', TAG_STR = 'S', TAG_NULL = 'N', TAG_U64 = 'U', TAG_BYTES = 'B' };

/* Appends to buf, or to the state once buf cannot hold it. */
static void kh_bytes(struct keyhash *h, const void *p, size_t n)
{
        if (!h->started || !n)
                return;
        if (!h->state && h->len + n <= sizeof(h->buf)) {
                memcpy(h->buf + h->len, p, n);
                h->len += n;
                return;
        }
        if (!h->state) {
                XXH3_state_t *st = XXH3_createState();
                if (!st || XXH3_128bits_reset(st) != XXH_OK) {
                        XXH3_freeState(st);
                        h->started = false; /* keyhash_end gives the all-zero key */
                        return;
                }
                XXH3_128bits_update(st, h->buf, h->len);
                h->state = st;
        }
        XXH3_128bits_update(h->state, p, n);
}

static void kh_field(struct keyhash *h, uint8_t tag, const void *p, size_t n)
{
        uint8_t hdr[9];

        hdr[0] = tag;
        for (int i = 0; i < 8; i++)
                hdr[1 + i] = (uint8_t)((uint64_t)n >> (8 * i));
        kh_bytes(h, hdr, sizeof(hdr));
        kh_bytes(h, p, n);
}

int keyhash_begin(struct keyhash *h, const char *format)
{
        h->state = NULL;
        h->len = 0;
        h->started = true;
        kh_field(h, TAG_FORMAT, format ? format : "", format ? strlen(format) : 0);
        return 0;
}

void keyhash_str(struct keyhash *h, const char *s)
{
        if (!s)
                kh_field(h, TAG_NULL, NULL, 0);
        else
                kh_field(h, TAG_STR, s, strlen(s));
}

void keyhash_u64(struct keyhash *h, uint64_t v)
{
        uint8_t b[8];
        for (int i = 0; i < 8; i++)
                b[i] = (uint8_t)(v >> (8 * i));
        kh_field(h, TAG_U64, b, sizeof(b));
}

void keyhash_bytes(struct keyhash *h, const void *p, size_t n)
{
        kh_field(h, TAG_BYTES, p, n);
}

/* Frees the state; a keyhash that could not be built (no memory for a long
 * one's state) yields the all-zero key. */
void keyhash_end(struct keyhash *h, struct row_key *ret_key)
{
        XXH128_canonical_t c;

        if (!h->started) {
                XXH3_freeState(h->state);
                h->state = NULL;
                memset(ret_key, 0, sizeof(*ret_key));
                return;
        }
        XXH128_canonicalFromHash(&c, h->state ? XXH3_128bits_digest(h->state) : XXH3_128bits(h->buf, h->len));
        XXH3_freeState(h->state);
        h->state = NULL;
        h->started = false;
        memcpy(ret_key->b, c.digest, ROW_KEY_SIZE);
}

uint64_t hash64(const void *p, size_t n)
{
        /* long inputs (whole documents) through the fastest XXH3 the CPU
         * runs; XXH3 with seed 0 is XXH3_64bits */
        return n > 4096 ? xxh3_bulk(p, n, 0) : XXH3_64bits(p, n);
}

/* A call with an id is keyed by (usage key, id) only, so the same call seen
 * at another position of a re-written or split record keeps its key; only
 * id-less calls are keyed by their index. Uses a stack state: no allocation. */
void row_call_key(const struct row_key *usage_key, uint32_t index, const char *call_id,
                  struct row_key *ret_key)
{
        struct keyhash h;

        keyhash_begin(&h, "call");
        keyhash_bytes(&h, usage_key->b, ROW_KEY_SIZE);
        if (call_id && *call_id)
                keyhash_str(&h, call_id);
        else
                keyhash_u64(&h, index);
        keyhash_end(&h, ret_key);
}

/* v1 layout (little-endian): u8 version, u32 flags, u8 kind, u8 cost_source,
 * i64 time_ms, u64 input, output, cache_read, cache_write, reasoning, total,
 * i64 cost_nano, u64 source_hash, u32 n_calls, then tool, session,
 * project, provider, model, model_alias as u16 length + bytes. v2 appends
 * u64 cache_write_1h, then tier and price_source as u16 length + bytes.
 * The key is the LMDB key and is not repeated in the value. */
int row_encode(const struct usage_row *row, uint8_t *buf, size_t cap, size_t *ret_len)
{
        struct bw w = {.p = buf, .cap = cap};

        /* version 3: counts as varints and strings with varint lengths (a
         * realistic r200 row: 104 bytes instead of 170); the source hash is
         * random, so fixed */
        bw_u8(&w, ROW_FORMAT_VERSION);
        bw_var(&w, row->flags);
        bw_u8(&w, row->kind);
        bw_u8(&w, row->cost_source);
        bw_var(&w, (uint64_t)row->time_ms);
        bw_var(&w, row->input);
        bw_var(&w, row->output);
        bw_var(&w, row->cache_read);
        bw_var(&w, row->cache_write);
        bw_var(&w, row->cache_write_1h);
        bw_var(&w, row->reasoning);
        bw_var(&w, row->total);
        bw_var(&w, (uint64_t)row->cost_nano);
        bw_u64(&w, row->source_hash);
        bw_var(&w, row->n_calls);
        bw_strv(&w, row->tool, sizeof(row->tool));
        bw_strv(&w, row->session, sizeof(row->session));
        bw_strv(&w, row->project, sizeof(row->project));
        bw_strv(&w, row->provider, sizeof(row->provider));
        bw_strv(&w, row->model, sizeof(row->model));
        bw_strv(&w, row->model_alias, sizeof(row->model_alias));
        bw_strv(&w, row->tier, sizeof(row->tier));
        bw_strv(&w, row->price_source, sizeof(row->price_source));
        if (w.overflow)
                return -ENOBUFS;
        *ret_len = w.len;
        return 0;
}

/* Versions 1 and 2: fixed-width counts, u16 string lengths. */
static void decode_v1v2(struct br *r, uint8_t version, struct usage_row *row)
{
        row->flags = br_u32(r);
        row->kind = br_u8(r);
        row->cost_source = br_u8(r);
        row->time_ms = (int64_t)br_u64(r);
        row->input = br_u64(r);
        row->output = br_u64(r);
        row->cache_read = br_u64(r);
        row->cache_write = br_u64(r);
        row->reasoning = br_u64(r);
        row->total = br_u64(r);
        row->cost_nano = (int64_t)br_u64(r);
        row->source_hash = br_u64(r);
        row->n_calls = br_u32(r);
        br_str(r, row->tool, sizeof(row->tool));
        br_str(r, row->session, sizeof(row->session));
        br_str(r, row->project, sizeof(row->project));
        br_str(r, row->provider, sizeof(row->provider));
        br_str(r, row->model, sizeof(row->model));
        br_str(r, row->model_alias, sizeof(row->model_alias));
        if (version >= 2) {
                row->cache_write_1h = br_u64(r);
                br_str(r, row->tier, sizeof(row->tier));
                br_str(r, row->price_source, sizeof(row->price_source));
        }
}

/* A varint that must fit 32 bits (else the reader goes bad). */
static uint32_t br_var32(struct br *r)
{
        uint64_t v = br_var(r);
        if (v > UINT32_MAX)
                r->bad = true;
        return (uint32_t)v;
}

/* Version 3, as row_encode writes it. */
static void decode_v3(struct br *r, struct usage_row *row)
{
        row->flags = br_var32(r);
        row->kind = br_u8(r);
        row->cost_source = br_u8(r);
        row->time_ms = (int64_t)br_var(r);
        row->input = br_var(r);
        row->output = br_var(r);
        row->cache_read = br_var(r);
        row->cache_write = br_var(r);
        row->cache_write_1h = br_var(r);
        row->reasoning = br_var(r);
        row->total = br_var(r);
        row->cost_nano = (int64_t)br_var(r);
        row->source_hash = br_u64(r);
        row->n_calls = br_var32(r);
        br_strv(r, row->tool, sizeof(row->tool));
        br_strv(r, row->session, sizeof(row->session));
        br_strv(r, row->project, sizeof(row->project));
        br_strv(r, row->provider, sizeof(row->provider));
        br_strv(r, row->model, sizeof(row->model));
        br_strv(r, row->model_alias, sizeof(row->model_alias));
        br_strv(r, row->tier, sizeof(row->tier));
        br_strv(r, row->price_source, sizeof(row->price_source));
}

int row_decode(const uint8_t *buf, size_t len, struct usage_row *ret_row)
{
        struct br r = {.p = buf, .len = len};
        struct usage_row *row;
        uint8_t version;

        /* every version up to ours: older values decode with the newer
         * fields zero / empty */
        if (len < 1 || buf[0] < 1 || buf[0] > ROW_FORMAT_VERSION)
                return -EBADMSG;
        version = buf[0];
        /* decoded into this thread's scratch row, then its fields (not the
         * 12 KB of calls[], which a value never holds) copied out: no
         * allocation and no 12 KB copy per row read */
        static _Thread_local struct usage_row scratch;
        row = &scratch;
        memset(row, 0, offsetof(struct usage_row, calls));
        (void)br_u8(&r);
        if (version >= 3)
                decode_v3(&r, row);
        else
                decode_v1v2(&r, version, row);
        if (r.bad || r.pos != len)
                return -EBADMSG;
        /* The key is zero: the value does not carry it (the ledger fills it).
         * calls[] is left as it was: a stored row carries only n_calls. */
        memcpy(ret_row, row, offsetof(struct usage_row, calls));
        return 0;
}

void row_key_hex(const struct row_key *key, char out[2 * ROW_KEY_SIZE + 1])
{
        static const char hex[] = "0123456789abcdef";
        for (size_t i = 0; i < ROW_KEY_SIZE; i++) {
                out[2 * i] = hex[key->b[i] >> 4];
                out[2 * i + 1] = hex[key->b[i] & 0xF];
        }
        out[2 * ROW_KEY_SIZE] = 0;
}

const char *row_kind_name(uint8_t kind)
{
        switch (kind) {
        case ROW_KIND_MESSAGE: return "message";
        case ROW_KIND_COMPACTION: return "compaction";
        case ROW_KIND_BRANCH_SUMMARY: return "branch_summary";
        case ROW_KIND_TOOL_RESULT: return "tool_result";
        case ROW_KIND_USAGE_ENTRY: return "usage_entry";
        case ROW_KIND_TURN: return "turn";
        case ROW_KIND_RESPONSE: return "response";
        case ROW_KIND_SNAPSHOT_STEP: return "snapshot_step";
        default: return "unknown";
        }
}

const char *cost_source_name(uint8_t src)
{
        switch (src) {
        case COST_NONE: return "none";
        case COST_VENDOR: return "vendor-reported";
        case COST_COMPUTED: return "computed";
        default: return "unknown";
        }
}

int row_batch_push_raw(struct row_batch *b, struct usage_row **ret_row)
{
        if (b->n == b->cap) {
                size_t ncap = b->cap ? b->cap * 2 : 8;
                struct usage_row *nr;

                if (ncap > SIZE_MAX / sizeof(*nr))
                        return -ENOMEM;
                nr = realloc(b->rows, ncap * sizeof(*nr));
                if (!nr)
                        return -ENOMEM;
                b->rows = nr;
                b->cap = ncap;
        }
        *ret_row = &b->rows[b->n++];
        return 0;
}

int row_batch_push(struct row_batch *b, struct usage_row **ret_row)
{
        struct usage_row *r;
        int e = row_batch_push_raw(b, &r);

        if (e < 0)
                return e;
        /* all but calls[] (12 KB a row): adapters write both strings of
         * each call below n_calls, and nothing reads past it */
        memset(r, 0, offsetof(struct usage_row, calls));
        *ret_row = r;
        return 0;
}

void row_batch_clear(struct row_batch *b)
{
        b->n = 0;
        free(b->limits);
        b->limits = NULL;
}

void row_batch_free(struct row_batch *b)
{
        row_batch_clear(b);
        free(b->rows);
        b->rows = NULL;
        b->n = b->cap = 0;
}
