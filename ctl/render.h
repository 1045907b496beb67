/* Turns a report object (common/report.h) into what the user asked for: an
 * aligned table with a TOTAL line and a legend, RFC 4180 CSV, or the JSON
 * itself; and one `tail` row into one readable line. */
#pragma once

#include <stdbool.h>
#include <stdio.h>

struct json_object;

enum render_format { RENDER_TABLE = 0, RENDER_CSV = 1, RENDER_JSON = 2 };

/* 0, -EINVAL (not a report object), -EIO (write failed). */
int render_report(FILE *f, struct json_object *report, enum render_format format, bool pretty);

/* Writes one RFC 4180 field: quoted (with doubled quotes) when it holds a
 * comma, a quote, CR or LF, or begins or ends with a blank. */
void render_csv_field(FILE *f, const char *s);

/* One line per committed row: local time, harness, provider/model, tokens,
 * cost (with marks), tool calls. */
int render_tail_row(FILE *f, struct json_object *row);
