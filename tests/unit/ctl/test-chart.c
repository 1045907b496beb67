/* Cost bars: scaled so the largest fills the room, eighth-cell steps, the
 * figure beside each bar, unknown costs without a bar, escaped keys, every
 * line within the width. */
#include <errno.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chart.h"
#include "table.h"
#include "tap.h"

static size_t count(const char *s, const char *needle)
{
        size_t n = 0, k = strlen(needle);
        for (const char *p = s; (p = strstr(p, needle)); p += k)
                n++;
        return n;
}

static char *line_of(char *out, int i)
{
        static char buf[4096];
        char *p = out;
        for (int k = 0; k < i && p; k++) {
                p = strchr(p, '\n');
                if (p)
                        p++;
        }
        if (!p)
                return strcpy(buf, "");
        size_t len = strcspn(p, "\n");
        memcpy(buf, p, len);
        buf[len] = 0;
        return buf;
}

int main(void)
{
        const char *rep_json =
                "{\"report\":\"daily\",\"rows\":["
                "{\"key\":\"2026-12-01\",\"cost_usd\":4.0,\"cost_source\":\"vendor-reported\",\"unpriced_events\":0},"
                "{\"key\":\"2026-12-02\",\"cost_usd\":2.0,\"cost_source\":\"computed\",\"unpriced_events\":0},"
                "{\"key\":\"2026-12-03\",\"cost_usd\":null,\"unpriced_events\":3},"
                "{\"key\":\"2026-12-04\",\"cost_usd\":0.0625,\"cost_source\":\"vendor-reported\",\"unpriced_events\":1},"
                "{\"key\":\"evil\\u001b[2J\",\"cost_usd\":0.0,\"cost_source\":\"vendor-reported\"}],"
                "\"totals\":{\"cost_usd\":6.0625,\"cost_source\":\"mixed\",\"unpriced_events\":4}}";
        json_object *rep = json_tokener_parse(rep_json);
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);

        ok(rep != NULL, "report parses");
        is_int(chart_render(f, rep, 60), 0, "renders");
        fclose(f);
        for (int i = 0; i < 7; i++)
                printf("# %s\n", line_of(out, i));

        /* key 11 columns (the escaped key is 12: cut to the widest of 24), figure ~$2.000000 */
        char *l0 = strdup(line_of(out, 0)), *l1 = strdup(line_of(out, 1)), *l2 = strdup(line_of(out, 2)),
             *l3 = strdup(line_of(out, 3)), *l4 = strdup(line_of(out, 4)), *lt = strdup(line_of(out, 5));
        size_t full0 = count(l0, "\u2588"), full1 = count(l1, "\u2588");
        ok(full0 > 20, "the largest cost gets a long bar (%zu cells)", full0);
        ok(full1 * 2 == full0 || full1 * 2 + 1 == full0, "half the cost, half the bar (%zu of %zu)", full1, full0);
        ok(strstr(l0, "$4.000000") != NULL, "figure beside the bar");
        ok(strstr(l1, "~$2.000000") != NULL, "computed cost keeps its ~ mark");
        is_int(count(l2, "\u2588"), 0, "unknown cost: no bar");
        ok(strstr(l2, "\u2014") != NULL, "unknown cost: the dash, not zero");
        ok(strstr(l3, "$0.062500*") != NULL, "partly unpriced keeps its * mark");
        /* 0.0625/4 of the room: one cell at most, drawn as eighths */
        ok(count(l3, "\u2588") == 0 && (strstr(l3, "\u258f") || strstr(l3, "\u258e") ||
                                          strstr(l3, "\u258d") || strstr(l3, "\u258c")),
           "a small cost is a partial cell");
        ok(strstr(l4, "evil\\x1b[2J") != NULL && !strchr(l4, 0x1b), "control characters in a key are escaped");
        ok(strncmp(lt, "TOTAL", 5) == 0 && strstr(lt, "~$6.062500*") != NULL, "TOTAL line with marks");
        size_t widest = 0;
        for (int i = 0; i < 6; i++) {
                size_t w = table_width(line_of(out, i));
                widest = w > widest ? w : widest;
        }
        ok(widest <= 60, "every bar line fits in 60 columns (%zu)", widest);
        ok(table_width(l0) == table_width(l1), "figures are right-aligned (same line width)");

        free(out);
        out = NULL;
        f = open_memstream(&out, &len);
        is_int(chart_render(f, rep, 200), 0, "renders wider");
        fclose(f);
        ok(count(line_of(out, 0), "\u2588") > 3 * full0, "a wider terminal gets longer bars");

        json_object *bad = json_tokener_parse("{\"report\":\"daily\"}");
        f = fopen("/dev/null", "w");
        is_int(chart_render(f, bad, 80), -EINVAL, "no rows: -EINVAL");
        fclose(f);
        json_object_put(bad);
        free(out);
        free(l0), free(l1), free(l2), free(l3), free(l4), free(lt);
        json_object_put(rep);
        return tap_done();
}
