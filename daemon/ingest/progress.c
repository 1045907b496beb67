/* In-place progress line for long --once scans (terminal only). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ingest/ingest.h"
#include "ingest/progress.h"
#include "testhook.h"
#include "timefmt.h"

#define REDRAW_MS 200

static void bytes_text(uint64_t v, char *buf, size_t cap)
{
        static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
        double d = (double)v;
        int u = 0;
        while (d >= 1024.0 && u < 4)
                d /= 1024.0, u++;
        if (u == 0)
                snprintf(buf, cap, "%llu B", (unsigned long long)v);
        else
                snprintf(buf, cap, "%.1f %s", d, unit[u]);
}

static void count_text(uint64_t v, char *buf, size_t cap)
{
        char d[32];
        size_t n, o = 0;
        snprintf(d, sizeof(d), "%llu", (unsigned long long)v);
        n = strlen(d);
        for (size_t i = 0; i < n && o + 2 < cap; i++) {
                if (i && (n - i) % 3 == 0)
                        buf[o++] = ',';
                buf[o++] = d[i];
        }
        buf[o] = 0;
}

void progress_format(uint64_t files_done, uint64_t files, uint64_t bytes_done, uint64_t bytes,
                     uint64_t rows, int64_t elapsed_ms, char *buf, size_t cap)
{
        char done[32], all[32], rate[32], r[32], eta[32];
        double secs = elapsed_ms > 0 ? (double)elapsed_ms / 1000.0 : 0.001;
        double bps = (double)bytes_done / secs;
        unsigned pct = bytes ? (unsigned)(bytes_done * 100 / bytes) : 100;

        bytes_text(bytes_done, done, sizeof(done));
        bytes_text(bytes, all, sizeof(all));
        bytes_text((uint64_t)bps, rate, sizeof(rate));
        count_text(rows, r, sizeof(r));
        if (bps >= 1.0 && bytes > bytes_done) {
                uint64_t left = (uint64_t)((double)(bytes - bytes_done) / bps + 0.5);
                snprintf(eta, sizeof(eta), "%llu:%02llu", (unsigned long long)(left / 60),
                         (unsigned long long)(left % 60));
        } else {
                snprintf(eta, sizeof(eta), bytes > bytes_done ? "?" : "0:00");
        }
        snprintf(buf, cap, "scan: %llu/%llu files, %s of %s (%u%%), %s rows, %s/s, ETA %s",
                 (unsigned long long)files_done, (unsigned long long)files, done, all,
                 pct > 100 ? 100 : pct, r, rate, eta);
}

void progress_start(struct progress *p, int fd)
{
        *p = (struct progress){ .fd = fd, .enabled = isatty(fd) == 1, .start_ms = timefmt_mono_ms(),
                                .after_ms = (int64_t)test_hook_number("AGENTMETER_TEST_PROGRESS_MS", 0,
                                                                      3600000, 1000) };
}

void progress_update(struct progress *p, struct ingest *in)
{
        int64_t now = timefmt_mono_ms();
        uint64_t done, known, files = 0, files_done = 0;
        char line[256], out[300];
        size_t it;

        if (!p->enabled || now - p->start_ms < p->after_ms || (p->shown && now - p->last_ms < REDRAW_MS))
                return;
        ingest_progress(in, &done, &known);
        for (struct source_rec *s = ingest_sources_first(in, &it); s; s = ingest_sources_next(in, &it)) {
                files++;
                files_done += !s->queued;
        }
        progress_format(files_done, files, done, known, ingest_counters(in)->rows_added,
                        now - p->start_ms, line, sizeof(line));
        int n = snprintf(out, sizeof(out), "\r\033[K%s", line);
        if (write(p->fd, out, (size_t)n) == n)
                p->shown = true;
        p->last_ms = now;
}

void progress_end(struct progress *p)
{
        if (p->shown && write(p->fd, "\r\033[K", 4) == 4)
                p->shown = false;
}
