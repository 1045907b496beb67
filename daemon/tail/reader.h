/* What the three source readers (tail/lines.c, tail/document.c,
 * tail/table.c) share: one read of one source, its checkpoint and parse
 * state, the rows it collected, and the commit that writes rows and the new
 * checkpoint in one transaction (tail/reader.c). Internal to tail. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "tail/consumed.h"
#include "tail/pending-state.h"
#include "tail/tail.h"
#include "zstream.h"

#define HEAD_MAX   1024u
#define MARKER_MAX 64u

struct reader {
        struct tail_ctx *t;
        const struct source_ctx *src;
        int fd;
        struct zstream *z;      /* a compressed line source: decoded-offset reads */
        struct stat st;
        struct checkpoint cp;
        bool have_cp;           /* cp was read from the ledger (else fresh) */
        struct parse_state ps;
        struct row_batch batch;
        struct pending_states *states; /* a table read's: committed with the batch */
        uint8_t *outcomes;
        size_t outcomes_cap;
        char *buf;
        size_t cap, len;
        uint64_t buf_off;       /* source offset of buf[0] */
        bool skipping;          /* inside an over-long line */
        uint8_t win[MARKER_MAX];/* the bytes just before cp.offset (while skipping:
                                 * before the read position) */
        size_t win_len;
        uint8_t skip_win[MARKER_MAX]; /* while skipping: the bytes before cp.offset */
        size_t skip_win_len;
        uint64_t committed_off; /* cp.offset at the last commit */
        uint64_t read_since_commit;
        uint64_t lines_since, malformed_since, oversized_since;
        bool dirty;             /* something to commit even without rows */
        bool at_end;            /* read_lines reached the end of the source */
        struct consumed_acc acc;/* the consumed-bytes chain, fed from buf */
        struct tail_outcome out;
        char head[HEAD_MAX];    /* the file's first bytes (not decoded), read once */
        size_t head_n;
        bool head_read;
        size_t first_n;         /* buf[0, first_n): the first read of a plain file
                                 * from 0, made with the head's (tail/lines.c) */
};

static inline int64_t mtime_ns(const struct stat *st)
{
        return (int64_t)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;
}

/* Opens src->path read-only without following a FIFO's open into a block:
 * a regular file or -EISDIR/-EINVAL. */
int reader_open(struct reader *rd);
/* The source's checkpoint into rd->cp (have_cp), or a fresh one of kind
 * when it has none. A checkpoint of another kind (the path was another
 * kind of source in an earlier release) starts over at position 0 with its
 * counters kept. */
int reader_checkpoint(struct reader *rd, uint8_t kind);
/* cp's position forgotten: read again from 0 (counters kept). */
void checkpoint_reset(struct checkpoint *cp, const struct stat *st);
/* rd->ps from the checkpoint's state; false when it does not decode. */
bool reader_state(struct reader *rd);
/* Rows collected so far, counters and the checkpoint, in one transaction. */
int reader_commit(struct reader *rd);
/* The end of a read: what was seen goes to ret_outcome, r is passed on. */
int reader_finish(struct reader *rd, struct tail_outcome *ret_outcome, int r);

/* Bytes of the source at off: of the file, or of its decoded stream. */
int reader_pread(struct reader *rd, void *buf, size_t n, uint64_t off, size_t *ret_n);
int pread_full(int fd, void *buf, size_t n, uint64_t off, size_t *ret_n);
/* One read of at most n bytes (a decoder's reads are whole): fewer than n
 * at the end, or where the kernel stops short; 0 only at the end. */
int reader_pread_some(struct reader *rd, void *buf, size_t n, uint64_t off, size_t *ret_n);
/* reader_pread_some for a file's first read, which also says whether the
 * page cache held the bytes (*ret_missed false) or the disk was waited for
 * (a first scan after a reboot). Where the kernel cannot tell (no
 * RWF_NOWAIT), or for a compressed file, *ret_missed is false. */
int reader_pread_first(struct reader *rd, void *buf, size_t n, uint64_t off, size_t *ret_n,
                       bool *ret_missed);
/* The file's first HEAD_MAX bytes as stored (not decoded), read at the first
 * call only: a read's identity checks, its compression sniff and its
 * checkpoint's head share one read. */
int reader_head(struct reader *rd, const char **ret_head, size_t *ret_n);

int tail_lines(struct tail_ctx *t, const struct source_ctx *src, struct tail_outcome *ret_outcome);
int tail_document(struct tail_ctx *t, const struct source_ctx *src, struct tail_outcome *ret_outcome);
int tail_table(struct tail_ctx *t, const struct source_ctx *src, struct tail_outcome *ret_outcome);
