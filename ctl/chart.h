/* `report daily|weekly|monthly --chart`: the cost column of a report as
 * horizontal bars of Unicode block characters (eighths of a cell), scaled
 * to the width, with the figure beside each bar. Reads the same report
 * JSON the table renderer gets. */
#pragma once

#include <stdio.h>

struct json_object;

/* The terminal's width for f (TIOCGWINSZ, else $COLUMNS, else 80). */
int chart_width(FILE *f);

/* 0, -EINVAL (not a report with rows), -EIO. width is clamped to 40..1000. */
int chart_render(FILE *f, struct json_object *report, int width);
