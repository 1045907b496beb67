/* Turns a report object (common/report/report.h) into what the user asked for: an
 * aligned table with a TOTAL line and a legend, RFC 4180 CSV, or the JSON
 * itself; and one `tail` row into one readable line. The table's cells and
 * caption are built here once, for the terminal and the HTML page (html/report.h). */
#pragma once

#include <stdbool.h>
#include <stdio.h>

struct json_object;
struct table;

#define RENDER_NO_ROWS "no usage recorded for this selection"

enum render_format { RENDER_TABLE = 0, RENDER_CSV = 1, RENDER_JSON = 2 };

/* 0, -EINVAL (not a report object), -EIO (write failed). */
int render_report(FILE *f, struct json_object *report, enum render_format format, bool pretty);

/* The report's table as the terminal shows it: its kind's columns, cells
 * with the cost marks (fmt.h) and text escaped (termtext.h), a rule, then
 * the TOTAL line. 0, -EINVAL (not a report object), -ENOMEM. */
int render_report_table(struct json_object *report, struct table **ret_table);
/* The line above the table: "daily report, 2026-11-01 .. now, time zone UTC". */
void render_caption(FILE *f, struct json_object *report);
/* The lines after a blocks table (the active block, the real limit windows);
 * nothing for the other kinds. */
void render_report_notes(FILE *f, struct json_object *report);

/* Writes one RFC 4180 field: quoted (with doubled quotes) when it holds a
 * comma, a quote, CR or LF, or begins or ends with a blank. */
void render_csv_field(FILE *f, const char *s);

/* One line per committed row: local time, harness, provider/model, tokens,
 * cost (with marks), tool calls. */
int render_tail_row(FILE *f, struct json_object *row);
