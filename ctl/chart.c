/* Cost bars for the terminal: one line per report row, the key, a bar in
 * eighth-cell steps proportional to the row's cost (the largest fills the
 * room), and the cost with its marks (fmt_cost). */
#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "chart.h"
#include "fmt.h"
#include "jfield.h"
#include "table.h"
#include "termtext.h"

#define KEY_MAX_COLS 24

/* U+2588 full block, then U+258F..U+2589: one to seven eighths. */
static const char *const eighths[8] = {
        "", "\u258f", "\u258e", "\u258d", "\u258c", "\u258b", "\u258a", "\u2589",
};
#define FULL "\u2588"

int chart_width(FILE *f)
{
        struct winsize ws;
        const char *cols = getenv("COLUMNS");

        if (ioctl(fileno(f), TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
                return ws.ws_col;
        if (cols) {
                long v = strtol(cols, NULL, 10);
                if (v > 0 && v < 10000)
                        return (int)v;
        }
        return 80;
}

static void pad(FILE *f, size_t n)
{
        while (n--)
                fputc(' ', f);
}

int chart_render(FILE *f, json_object *report, int width)
{
        json_object *rows = jfield(report, "rows");
        char cost[FMT_MAX], key[4 * KEY_MAX_COLS + 8];
        size_t n, key_w = 5 /* TOTAL */, cost_w = 1;
        double max = 0;

        if (!rows || !json_object_is_type(rows, json_type_array))
                return -EINVAL;
        if (width < 40)
                width = 40;
        if (width > 1000)
                width = 1000;
        n = json_object_array_length(rows);
        for (size_t i = 0; i < n; i++) {
                json_object *r = json_object_array_get_idx(rows, i);
                double v;
                termtext(jstr(r, "key"), key, sizeof(key));
                size_t kw = table_width(key);
                key_w = kw > key_w ? kw : key_w;
                size_t cw = table_width(fmt_cost(r, "cost_usd", cost));
                cost_w = cw > cost_w ? cw : cost_w;
                if (jdouble(r, "cost_usd", &v) && v > max)
                        max = v;
        }
        json_object *tot = jfield(report, "totals");
        if (tot) {
                size_t cw = table_width(fmt_cost(tot, "cost_usd", cost));
                cost_w = cw > cost_w ? cw : cost_w;
        }
        if (key_w > KEY_MAX_COLS)
                key_w = KEY_MAX_COLS;
        int room = width - (int)key_w - (int)cost_w - 3;
        if (room < 10)
                room = 10;
        for (size_t i = 0; i < n; i++) {
                json_object *r = json_object_array_get_idx(rows, i);
                double v = 0;
                bool known = jdouble(r, "cost_usd", &v);
                long cells8 = known && max > 0 && v > 0 ? lround(v / max * room * 8) : 0;

                if (known && v > 0 && cells8 == 0)
                        cells8 = 1; /* not nothing: a sliver */
                termtext(jstr(r, "key"), key, sizeof(key));
                /* cut a long key to its columns */
                size_t kw = table_width(key);
                while (kw > key_w) {
                        size_t len = strlen(key);
                        while (len > 0 && ((unsigned char)key[len - 1] & 0xc0) == 0x80)
                                len--;
                        key[len > 0 ? len - 1 : 0] = 0;
                        kw = table_width(key);
                }
                fputs(key, f);
                pad(f, key_w - kw + 1);
                for (long c = 0; c < cells8 / 8; c++)
                        fputs(FULL, f);
                fputs(eighths[cells8 % 8], f);
                pad(f, (size_t)(room - cells8 / 8 - (cells8 % 8 ? 1 : 0)) + 1);
                fmt_cost(r, "cost_usd", cost);
                pad(f, cost_w - table_width(cost));
                fprintf(f, "%s\n", cost);
        }
        if (tot) {
                fmt_cost(tot, "cost_usd", cost);
                fputs("TOTAL", f);
                pad(f, key_w - 5 + 1 + (size_t)room + 1 + cost_w - table_width(cost));
                fprintf(f, "%s\n", cost);
        }
        if (n == 0)
                fputs("(no rows in this range)\n", f);
        fprintf(f, "%s\n", FMT_COST_LEGEND);
        return fflush(f) != 0 || ferror(f) ? -EIO : 0;
}
