/* What the feed (one thread) hands to the HTTP connections (one thread
 * each): the page's current state as one JSON text with a sequence number,
 * a wait for the next one, and the count of requests in progress (idle exit). */
#pragma once

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct web_hub {
        pthread_mutex_t mu;
        pthread_cond_t cond;  /* CLOCK_MONOTONIC */
        uint64_t seq;         /* 0: no state yet */
        char *state;
        bool stopping;
        int conns;              /* requests in progress (an open event stream is one) */
        int64_t last_active_ms; /* monotonic: a request began or ended */
};

int web_hub_init(struct web_hub *h);
void web_hub_free(struct web_hub *h);
/* Takes state (malloc'd). The same text as the current one is dropped (no
 * new sequence number); else every waiter wakes. */
void web_hub_publish(struct web_hub *h, char *state);
/* Waits up to timeout_ms for a state newer than *seq: 1 with a copy in
 * *ret_state (malloc'd) and *seq moved on; 0 on the timeout; -ECANCELED when
 * stopping; -ENOMEM. */
int web_hub_wait(struct web_hub *h, uint64_t *seq, int timeout_ms, char **ret_state);
/* Wakes every waiter for good. */
void web_hub_stop(struct web_hub *h);
void web_hub_conn(struct web_hub *h, int delta);
/* Whether no request is in progress and none began or ended for idle_ms. */
bool web_hub_idle(struct web_hub *h, int64_t idle_ms);
