/* The --once progress line's text: files, bytes, percent, rows, rate, ETA. */
#include "ingest/progress.h"
#include "tap.h"

int main(void)
{
        char b[256];

        progress_format(3, 10, 12u << 20, 40u << 20, 1234, 2000, b, sizeof(b));
        is_str(b, "scan: 3/10 files, 12.0 MiB of 40.0 MiB (30%), 1,234 rows, 6.0 MiB/s, ETA 0:05",
               "line mid-scan");
        progress_format(10, 10, 40u << 20, 40u << 20, 1234567, 4000, b, sizeof(b));
        is_str(b, "scan: 10/10 files, 40.0 MiB of 40.0 MiB (100%), 1,234,567 rows, 10.0 MiB/s, ETA 0:00",
               "line at the end");
        progress_format(0, 5, 0, 1000, 0, 1500, b, sizeof(b));
        is_str(b, "scan: 0/5 files, 0 B of 1000 B (0%), 0 rows, 0 B/s, ETA ?", "nothing read yet: no ETA");
        progress_format(1, 1, 100, 0, 1, 0, b, sizeof(b));
        is_str(b, "scan: 1/1 files, 100 B of 0 B (100%), 1 rows, 97.7 KiB/s, ETA 0:00",
               "no known size and no elapsed time: no division by zero");
        progress_format(1, 2, 1, 3600u * 2, 0, 1000, b, sizeof(b));
        is_str(b, "scan: 1/2 files, 1 B of 7.0 KiB (0%), 0 rows, 1 B/s, ETA 119:59", "long ETA in minutes");
        return tap_done();
}
