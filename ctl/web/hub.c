/* The feed's state shared with the HTTP threads (hub.h): a mutex, a
 * condition on the monotonic clock, the latest JSON text. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "timefmt.h"
#include "web/hub.h"

int web_hub_init(struct web_hub *h)
{
        pthread_condattr_t ca;
        int r;

        memset(h, 0, sizeof(*h));
        r = pthread_mutex_init(&h->mu, NULL);
        if (r)
                return -r;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        r = pthread_cond_init(&h->cond, &ca);
        pthread_condattr_destroy(&ca);
        if (r) {
                pthread_mutex_destroy(&h->mu);
                return -r;
        }
        h->last_active_ms = timefmt_mono_ms();
        return 0;
}

void web_hub_free(struct web_hub *h)
{
        pthread_cond_destroy(&h->cond);
        pthread_mutex_destroy(&h->mu);
        free(h->state);
        h->state = NULL;
}

void web_hub_publish(struct web_hub *h, char *state)
{
        pthread_mutex_lock(&h->mu);
        if (h->state && state && strcmp(h->state, state) == 0) {
                pthread_mutex_unlock(&h->mu);
                free(state);
                return;
        }
        free(h->state);
        h->state = state;
        h->seq++;
        pthread_cond_broadcast(&h->cond);
        pthread_mutex_unlock(&h->mu);
}

int web_hub_wait(struct web_hub *h, uint64_t *seq, int timeout_ms, char **ret_state)
{
        struct timespec until;
        int r = 0;

        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += timeout_ms / 1000;
        until.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
        if (until.tv_nsec >= 1000000000L) {
                until.tv_sec++;
                until.tv_nsec -= 1000000000L;
        }
        pthread_mutex_lock(&h->mu);
        while (!h->stopping && (h->seq <= *seq || !h->state) && r == 0)
                r = pthread_cond_timedwait(&h->cond, &h->mu, &until);
        if (h->stopping) {
                r = -ECANCELED;
        } else if (h->seq > *seq && h->state) {
                *ret_state = strdup(h->state);
                *seq = h->seq;
                r = *ret_state ? 1 : -ENOMEM;
        } else {
                r = 0;
        }
        pthread_mutex_unlock(&h->mu);
        return r;
}

void web_hub_stop(struct web_hub *h)
{
        pthread_mutex_lock(&h->mu);
        h->stopping = true;
        pthread_cond_broadcast(&h->cond);
        pthread_mutex_unlock(&h->mu);
}

void web_hub_conn(struct web_hub *h, int delta)
{
        pthread_mutex_lock(&h->mu);
        h->conns += delta;
        h->last_active_ms = timefmt_mono_ms();
        pthread_mutex_unlock(&h->mu);
}

bool web_hub_idle(struct web_hub *h, int64_t idle_ms)
{
        bool idle;

        pthread_mutex_lock(&h->mu);
        idle = h->conns == 0 && timefmt_mono_ms() - h->last_active_ms >= idle_ms;
        pthread_mutex_unlock(&h->mu);
        return idle;
}
