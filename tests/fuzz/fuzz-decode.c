/* libFuzzer target: the ledger's binary values as read back from disk (a
 * usage row, a parse state), which a damaged ledger can hand us. */
#include <stddef.h>
#include <stdint.h>

#include "adapter.h"
#include "row.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct usage_row row;
        struct parse_state ps;

        if (row_decode(data, size, &row) == 0) {
                uint8_t buf[ROW_ENCODED_MAX];
                size_t n;
                if (row_encode(&row, buf, sizeof(buf), &n) != 0)
                        __builtin_trap(); /* whatever decodes must encode again */
        }
        (void)parse_state_decode(data, size, &ps);
        return 0;
}
