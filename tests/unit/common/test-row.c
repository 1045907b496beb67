/* Unit tests for common/row.c: keys, encoding, UTF-8 truncation, batches. */
#include <errno.h>
#include <string.h>

#include "binio.h"
#include "row.h"
#include "tap.h"

static struct row_key key_of(const char *fmt, const char *a, const char *b)
{
        struct keyhash h;
        struct row_key k;
        if (keyhash_begin(&h, fmt) < 0)
                abort();
        keyhash_str(&h, a);
        keyhash_str(&h, b);
        keyhash_end(&h, &k);
        return k;
}

static void test_keyhash(void)
{
        struct row_key a = key_of("t", "ab", "c"), b = key_of("t", "a", "bc"),
                       c = key_of("t", "ab", "c"), d = key_of("u", "ab", "c"),
                       e = key_of("t", "ab", NULL), f = key_of("t", "ab", "");
        struct keyhash h;
        struct row_key g, i;

        ok(memcmp(&a, &c, sizeof(a)) == 0, "keyhash is deterministic");
        ok(memcmp(&a, &b, sizeof(a)) != 0, "(\"ab\",\"c\") != (\"a\",\"bc\")");
        ok(memcmp(&a, &d, sizeof(a)) != 0, "format tag separates key spaces");
        ok(memcmp(&e, &f, sizeof(e)) != 0, "NULL string differs from empty string");

        keyhash_begin(&h, "t");
        keyhash_str(&h, "abc");
        keyhash_end(&h, &g);
        keyhash_begin(&h, "t");
        keyhash_bytes(&h, "abc", 3);
        keyhash_end(&h, &i);
        ok(memcmp(&g, &i, sizeof(g)) != 0, "a string field differs from a bytes field");
        ok(h.state == NULL, "keyhash_end frees the state");

        keyhash_begin(&h, "t");
        keyhash_u64(&h, 1);
        keyhash_end(&h, &g);
        keyhash_begin(&h, "t");
        keyhash_u64(&h, 2);
        keyhash_end(&h, &i);
        ok(memcmp(&g, &i, sizeof(g)) != 0, "u64 fields hash their value");

        is_int(hash64("abc", 3), hash64("abc", 3), "hash64 deterministic");
        ok(hash64("abc", 3) != hash64("abd", 3), "hash64 differs on content");

        char hex[33];
        struct row_key z = {{0}};
        z.b[0] = 0xab;
        z.b[15] = 0x01;
        row_key_hex(&z, hex);
        is_str(hex, "ab000000000000000000000000000001", "row_key_hex");
}

static void test_call_key(void)
{
        struct row_key u = key_of("t", "x", "y"), u2 = key_of("t", "x", "z");
        struct row_key a, b, c, d, e;

        row_call_key(&u, 0, "toolu_1", &a);
        row_call_key(&u, 5, "toolu_1", &b);
        row_call_key(&u, 0, "toolu_2", &c);
        row_call_key(&u2, 0, "toolu_1", &d);
        ok(memcmp(&a, &b, sizeof(a)) == 0, "call with an id: key independent of index");
        ok(memcmp(&a, &c, sizeof(a)) != 0, "different call ids, different keys");
        ok(memcmp(&a, &d, sizeof(a)) != 0, "same call id under another row, different key");
        row_call_key(&u, 0, "", &a);
        row_call_key(&u, 1, "", &b);
        row_call_key(&u, 0, NULL, &e);
        ok(memcmp(&a, &b, sizeof(a)) != 0, "id-less calls keyed by index");
        ok(memcmp(&a, &e, sizeof(a)) == 0, "NULL id same as empty id");
}

static void test_set_str(void)
{
        char buf[6];
        /* "h€llo": € is 3 bytes (E2 82 AC) */
        row_set_str(buf, sizeof(buf), "h\xe2\x82\xac" "llo", 7);
        is_str(buf, "h\xe2\x82\xac" "l", "fits 5 bytes: whole euro sign kept");
        row_set_str(buf, 4, "h\xe2\x82\xac" "llo", 7);
        is_str(buf, "h", "cut inside a UTF-8 sequence backs up to its start");
        row_set_str(buf, 3, "ab\xe2\x82\xac", 5);
        is_str(buf, "ab", "cut at the lead byte keeps the prefix");
        row_set_str(buf, sizeof(buf), "abc", 3);
        is_str(buf, "abc", "short string copied");
        memset(buf, 'x', sizeof(buf));
        row_set_str(buf, sizeof(buf), NULL, 0);
        is_str(buf, "", "NULL gives empty string");
        row_set_str(buf, sizeof(buf), "abcdefgh", 2);
        is_str(buf, "ab", "len bounds the copy");
        row_set_str(buf, sizeof(buf), "a\0bc", 4);
        is_str(buf, "a", "embedded NUL ends the string");
        memset(buf, 'x', sizeof(buf));
        row_set_str(buf, sizeof(buf), "abcdefgh", 8);
        is_int(buf[5], 0, "always NUL-terminated when truncating");
        is_str(buf, "abcde", "ASCII truncation keeps cap-1 bytes");
}

static void fill_row(struct usage_row *r)
{
        memset(r, 0, sizeof(*r));
        r->flags = ROW_F_TOKENS_KNOWN | ROW_F_SIDECHAIN;
        r->kind = ROW_KIND_COMPACTION;
        r->cost_source = COST_VENDOR;
        r->time_ms = -1234567;
        r->input = 1;
        r->output = 2;
        r->cache_read = 3;
        r->cache_write = 4;
        r->reasoning = 5;
        r->total = UINT64_MAX;
        r->cost_nano = -42;
        r->source_hash = 0x0102030405060708ull;
        r->n_calls = 3;
        ROW_SET(r->tool, "openclaw");
        ROW_SET(r->session, "sess-1");
        ROW_SET(r->project, "/home/u/proj");
        ROW_SET(r->provider, "anthropic");
        ROW_SET(r->model, "claude-x");
        ROW_SET(r->model_alias, "fast");
        ROW_SET(r->calls[0].name, "bash");
        r->cache_write_1h = 3;
        ROW_SET(r->tier, "priority");
        ROW_SET(r->price_source, "table-2026-11-30");
}

/* A v1 value written field by field as the release before v2 wrote it. */
static size_t v1_value(uint8_t *buf, size_t cap)
{
        struct bw w = {.p = buf, .cap = cap};
        const char *strs[] = {"pi", "s1", "/p", "anthropic", "claude-sonnet-4-5", ""};

        bw_u8(&w, 1);
        bw_u32(&w, ROW_F_TOKENS_KNOWN);
        bw_u8(&w, ROW_KIND_MESSAGE);
        bw_u8(&w, COST_VENDOR);
        bw_u64(&w, 1700000000000ull);
        for (uint64_t f = 10; f <= 60; f += 10) /* input .. total */
                bw_u64(&w, f);
        bw_u64(&w, 1234);   /* cost_nano */
        bw_u64(&w, 99);     /* source_hash */
        bw_u32(&w, 2);      /* n_calls */
        for (size_t i = 0; i < 6; i++)
                bw_str(&w, strs[i], 256);
        return w.overflow ? 0 : w.len;
}

static void test_v1_decode(void)
{
        static struct usage_row b;
        uint8_t buf[512], out[ROW_ENCODED_MAX];
        size_t len = v1_value(buf, sizeof(buf)), olen;

        memset(&b, 0x55, sizeof(b));
        is_int(row_decode(buf, len, &b), 0, "a v1 value decodes");
        ok(b.input == 10 && b.output == 20 && b.cache_read == 30 && b.cache_write == 40 &&
           b.reasoning == 50 && b.total == 60, "v1 token fields unchanged");
        ok(b.cost_nano == 1234 && b.cost_source == COST_VENDOR && b.n_calls == 2,
           "v1 cost and calls unchanged");
        is_str(b.model, "claude-sonnet-4-5", "v1 model unchanged");
        ok(b.cache_write_1h == 0 && b.tier[0] == 0 && b.price_source[0] == 0,
           "v1 value: the v2 fields are zero and empty");
        is_int(row_decode(buf, len - 1, &b), -EBADMSG, "a truncated v1 value is rejected");
        is_int(row_encode(&b, out, sizeof(out), &olen), 0, "re-encoding a v1 row writes v3");
        ok(out[0] == 3 && olen < len, "v3 is smaller (%zu bytes against v1's %zu)", olen, len);
}

/* A v2 value as the releases of ledger schema 2 and 3 wrote it: v1's fields,
 * then cache_write_1h, tier and price source. */
static size_t v2_value(uint8_t *buf, size_t cap)
{
        size_t n = v1_value(buf, cap);
        struct bw w = {.p = buf, .cap = cap, .len = n};

        buf[0] = 2;
        bw_u64(&w, 77);
        bw_str(&w, "priority", 256);
        bw_str(&w, "table-2026-11-30", 256);
        return w.overflow ? 0 : w.len;
}

static void test_v2_decode(void)
{
        static struct usage_row b, c;
        uint8_t buf[512], out[ROW_ENCODED_MAX];
        size_t len = v2_value(buf, sizeof(buf)), olen;

        memset(&b, 0x55, sizeof(b));
        is_int(row_decode(buf, len, &b), 0, "a v2 value decodes");
        ok(b.input == 10 && b.total == 60 && b.cost_nano == 1234 && b.source_hash == 99 && b.n_calls == 2,
           "v2 counts unchanged");
        ok(b.cache_write_1h == 77, "v2 cache_write_1h");
        ok(strcmp(b.tier, "priority") == 0 && strcmp(b.price_source, "table-2026-11-30") == 0 &&
           strcmp(b.model, "claude-sonnet-4-5") == 0, "v2 strings");
        is_int(row_decode(buf, len - 1, &b), -EBADMSG, "a truncated v2 value is rejected");
        is_int(row_encode(&b, out, sizeof(out), &olen), 0, "re-encoding a v2 row writes v3");
        ok(out[0] == 3 && olen + 40 <= len, "v3 of it: %zu bytes against v2's %zu", olen, len);
        memset(&c, 0x55, sizeof(c));
        is_int(row_decode(out, olen, &c), 0, "and the v3 value decodes");
        ok(memcmp(&b, &c, offsetof(struct usage_row, calls)) == 0, "  to the same row");
}

/* A v3 value's varints are bounded: one longer than ten bytes, and flags or
 * a call count past 32 bits, are refused, not truncated. */
static void test_v3_bounds(void)
{
        static struct usage_row a, b;
        uint8_t buf[ROW_ENCODED_MAX], bad[ROW_ENCODED_MAX + 16];
        size_t len;

        fill_row(&a);
        is_int(row_encode(&a, buf, sizeof(buf), &len), 0, "encode for the bounds");
        /* flags (byte 1 on) as an eleven-byte varint of zero */
        bad[0] = 3;
        memset(bad + 1, 0x80, 10);
        bad[11] = 0;
        size_t flen = 1; /* the encoded flags' bytes, from buf + 1 */
        while (buf[flen] & 0x80)
                flen++;
        const uint8_t *rest = buf + 1 + flen; /* the fields after them */
        size_t nrest = len - 1 - flen;
        memcpy(bad + 12, rest, nrest);
        is_int(row_decode(bad, 12 + nrest, &b), -EBADMSG, "an eleven-byte varint is refused");
        /* flags of 2^32 (five bytes: 0x80 x4, 0x10) */
        memcpy(bad + 1, "\x80\x80\x80\x80\x10", 5);
        memcpy(bad + 6, rest, nrest);
        is_int(row_decode(bad, 6 + nrest, &b), -EBADMSG, "flags past 32 bits are refused");
        /* the same value with flags of 2^32 - 1 decodes */
        memcpy(bad + 1, "\xff\xff\xff\xff\x0f", 5);
        is_int(row_decode(bad, 6 + nrest, &b), 0, "flags of 2^32 - 1 decode");
        ok(b.flags == UINT32_MAX && b.input == a.input && strcmp(b.model, a.model) == 0,
           "  with the rest of the row after them");
}

static void test_encode(void)
{
        static struct usage_row a, b;
        uint8_t buf[ROW_ENCODED_MAX];
        size_t len;
        int r;

        fill_row(&a);
        r = row_encode(&a, buf, sizeof(buf), &len);
        is_int(r, 0, "encode ok");
        is_int(buf[0], ROW_FORMAT_VERSION, "first byte is the format version");
        memset(&b, 0x55, sizeof(b));
        r = row_decode(buf, len, &b);
        is_int(r, 0, "decode ok");
        ok(b.flags == a.flags && b.kind == a.kind && b.cost_source == a.cost_source,
           "flags, kind, cost_source round trip");
        is_int(b.time_ms, -1234567, "negative time round trips");
        ok(b.input == 1 && b.output == 2 && b.cache_read == 3 && b.cache_write == 4 &&
           b.reasoning == 5 && b.total == UINT64_MAX, "token fields round trip");
        is_int(b.cost_nano, -42, "cost round trips");
        ok(b.source_hash == a.source_hash, "source hash round trips");
        is_int(b.n_calls, 3, "n_calls kept");
        ok(a.calls[0].name[0] && (unsigned char)b.calls[0].name[0] == 0x55,
           "calls are not encoded (calls[] is not filled from the value, nor written)");
        is_str(b.tool, "openclaw", "tool");
        is_str(b.session, "sess-1", "session");
        is_str(b.project, "/home/u/proj", "project");
        is_str(b.provider, "anthropic", "provider");
        is_str(b.model, "claude-x", "model");
        is_str(b.model_alias, "fast", "model alias");
        ok(b.cache_write_1h == 3, "cache_write_1h round trips");
        is_str(b.tier, "priority", "tier round trips");
        is_str(b.price_source, "table-2026-11-30", "price source round trips");

        /* every strict prefix is rejected */
        int bad = 0;
        for (size_t n = 0; n < len; n++)
                if (row_decode(buf, n, &b) != -EBADMSG)
                        bad++;
        is_int(bad, 0, "every truncation gives -EBADMSG");
        buf[0] = ROW_FORMAT_VERSION + 1;
        is_int(row_decode(buf, len, &b), -EBADMSG, "unknown version gives -EBADMSG");
        buf[0] = ROW_FORMAT_VERSION;
        uint8_t big[ROW_ENCODED_MAX + 1];
        memcpy(big, buf, len);
        big[len] = 0;
        is_int(row_decode(big, len + 1, &b), -EBADMSG, "trailing bytes rejected");
        is_int(row_encode(&a, buf, 10, &len), -ENOBUFS, "encode into a small buffer fails");

        /* full-size strings still fit ROW_ENCODED_MAX */
        memset(a.project, 'p', sizeof(a.project) - 1);
        memset(a.session, 's', sizeof(a.session) - 1);
        memset(a.model, 'm', sizeof(a.model) - 1);
        memset(a.model_alias, 'a', sizeof(a.model_alias) - 1);
        memset(a.provider, 'v', sizeof(a.provider) - 1);
        memset(a.tool, 't', sizeof(a.tool) - 1);
        memset(a.tier, 'r', sizeof(a.tier) - 1);
        memset(a.price_source, 'q', sizeof(a.price_source) - 1);
        r = row_encode(&a, buf, sizeof(buf), &len);
        ok(r == 0 && len <= ROW_ENCODED_MAX, "maximal row fits ROW_ENCODED_MAX (%zu)", len);
        r = row_decode(buf, len, &b);
        ok(r == 0 && strlen(b.project) == ROW_PROJECT_MAX - 1, "maximal row decodes");
}

static void test_names(void)
{
        is_str(row_kind_name(ROW_KIND_MESSAGE), "message", "kind message");
        is_str(row_kind_name(ROW_KIND_COMPACTION), "compaction", "kind compaction");
        is_str(row_kind_name(ROW_KIND_BRANCH_SUMMARY), "branch_summary", "kind branch_summary");
        is_str(row_kind_name(ROW_KIND_TOOL_RESULT), "tool_result", "kind tool_result");
        is_str(row_kind_name(ROW_KIND_USAGE_ENTRY), "usage_entry", "kind usage_entry");
        is_str(row_kind_name(ROW_KIND_TURN), "turn", "kind turn");
        is_str(row_kind_name(ROW_KIND_RESPONSE), "response", "kind response");
        is_str(cost_source_name(COST_NONE), "none", "cost none");
        is_str(cost_source_name(COST_VENDOR), "vendor-reported", "cost vendor");
        is_str(cost_source_name(COST_COMPUTED), "computed", "cost computed");
}

static void test_batch(void)
{
        struct row_batch b = {0};
        struct usage_row *r = NULL;
        int fails = 0;

        for (int i = 0; i < 100; i++) {
                if (row_batch_push(&b, &r) < 0)
                        fails++;
                else if (r->time_ms != 0 || r->tool[0] != 0)
                        fails++;
                else
                        r->time_ms = i;
        }
        is_int(fails, 0, "100 pushes give zeroed rows");
        is_int(b.n, 100, "batch holds 100 rows");
        is_int(b.rows[57].time_ms, 57, "rows kept in order across growth");
        row_batch_clear(&b);
        is_int(b.n, 0, "clear empties");
        row_batch_push(&b, &r);
        is_int(r->time_ms, 0, "push after clear gives a zeroed row");
        row_batch_free(&b);
        ok(b.rows == NULL && b.n == 0 && b.cap == 0, "free resets the batch");
}

int main(void)
{
        test_keyhash();
        test_call_key();
        test_set_str();
        test_encode();
        test_v1_decode();
        test_v2_decode();
        test_v3_bounds();
        test_names();
        test_batch();
        return tap_done();
}
