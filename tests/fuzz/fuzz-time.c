/* libFuzzer target: the time strings harness files carry (RFC 3339 with
 * Go's trimmed fractions) and the days a report request names. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "timefmt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        int64_t ms;
        char day[64];

        if (timefmt_parse_rfc3339((const char *)data, size, &ms) == 0) {
                char out[32];
                timefmt_format_utc(ms, out);
        }
        if (size < sizeof(day)) {
                memcpy(day, data, size);
                day[size] = 0;
                (void)timefmt_parse_day(day, "UTC", &ms);
        }
        return 0;
}
