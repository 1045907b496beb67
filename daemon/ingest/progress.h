/* The progress line of `agentmeterd --once` on a terminal: files, bytes,
 * rows, rate and ETA, redrawn in place a few times a second once the scan
 * has taken more than a moment, and erased at the end. Silent when stderr
 * is not a terminal. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ingest;

struct progress {
        int fd;
        bool enabled, shown;
        int64_t start_ms, last_ms, after_ms;
};

/* Enabled when fd is a terminal. The line appears after after_ms (1000;
 * the test hook AGENTMETER_TEST_PROGRESS_MS overrides it). */
void progress_start(struct progress *p, int fd);
/* Redraws at most every 200 ms. */
void progress_update(struct progress *p, struct ingest *in);
/* Erases the line (when one was drawn). */
void progress_end(struct progress *p);

/* The text of the line (without escapes), for tests: "scan: 3/10 files,
 * 12.0 MiB of 40.0 MiB (30%), 1,234 rows, 95.1 MiB/s, ETA 0:01". */
void progress_format(uint64_t files_done, uint64_t files, uint64_t bytes_done, uint64_t bytes,
                     uint64_t rows, int64_t elapsed_ms, char *buf, size_t cap);
