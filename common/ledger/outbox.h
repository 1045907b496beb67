/* The team outbox: the rows and tool calls the team server has not yet
 * confirmed, in commit order, named by their content keys. While it is on,
 * ledger_commit and ledger_reprice append to it in the same write
 * transaction as the rows they change; the daemon's team push reads it and
 * deletes what the server committed (ledger_outbox_ack), like a source
 * offset that moves only after the commit. Off (no team.conf), nothing is
 * written and the named DB need not exist. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ledger/ledger.h"

#define OUTBOX_ID_SIZE 16 /* the ledger's identity towards the server */

enum outbox_type {
        OUTBOX_ROW = 1,  /* a usage row (key: its content key) */
        OUTBOX_CALL = 2, /* a tool call (in the entry: its place, its row's id and its
                          * index; the item read back carries its call key) */
};
#define OUTBOX_F_REPRICED 0x1u /* the row's cost was replaced by a reprice */

struct outbox_state {
        bool on;
        bool filling;          /* a walk that queues every stored row and call is due */
        uint64_t acked_seq;    /* the server confirmed every entry up to here */
        uint64_t next_seq;     /* the next entry gets at least this number */
        uint64_t entries;      /* queued now */
        uint8_t id[OUTBOX_ID_SIZE]; /* random, made when first turned on */
};

/* 0 and the state (all zero and off when the ledger never had an outbox). */
int ledger_outbox_state(struct ledger *l, struct outbox_state *ret_state);

/* On: creates the outbox (and its id) if needed; a ledger that already
 * holds rows gets filling set (see ledger_outbox_fill). Off: drops every
 * entry and marks it off (the id stays). Idempotent. */
int ledger_outbox_set(struct ledger *l, bool on);

/* The full walk: queues up to max_items stored rows and calls after
 * *cursor (zeroed to start) in one write txn; *ret_done when the walk
 * reached the end (filling is then cleared). A walk cut short by a crash
 * starts again: entries queued twice are sent twice, harmlessly. */
struct outbox_walk {
        uint8_t phase; /* 0 rows, 1 calls, 2 done */
        bool started;
        uint8_t key[ROW_KEY_SIZE]; /* where to go on: a row id (8 bytes) or a call's
                                    * place (12) */
};
int ledger_outbox_fill(struct ledger *l, struct outbox_walk *cursor, size_t max_items,
                       bool *ret_done);
/* Sets filling again (the server lost this ledger's history). */
int ledger_outbox_refill(struct ledger *l);

/* One queued entry with what it names, for ledger_outbox_read's callback:
 * row set for OUTBOX_ROW (calls not filled in), call for OUTBOX_CALL; an
 * entry whose row or call is gone is skipped. */
struct outbox_item {
        uint64_t seq;
        uint8_t type, flags;
        struct row_key key;
        const struct usage_row *row;
        const struct activity_entry *call;
};
/* Reads up to max entries numbered after `after` (0: from the oldest), in
 * one read txn; cb may stop the walk by returning non-zero (> 0: stop, no
 * error). *ret_last: the highest seq taken (`after` when none). */
int ledger_outbox_read(struct ledger *l, uint64_t after, size_t max,
                       int (*cb)(const struct outbox_item *it, void *u), void *u,
                       uint64_t *ret_last);

/* The server committed every entry up to seq: deletes them and records
 * acked_seq. */
int ledger_outbox_ack(struct ledger *l, uint64_t seq);

/* Changes whenever an entry was appended through this handle (a cheap
 * test for "anything new?", no txn). */
uint64_t ledger_outbox_counter(const struct ledger *l);

/* A new id (the server knew another history under the old one: e.g. this
 * ledger came back from a backup): entries stay, filling is set. */
int ledger_outbox_new_id(struct ledger *l);
