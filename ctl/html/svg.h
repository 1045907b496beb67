/* Inline SVG charts for the HTML report: stacked columns over periods and
 * stacked horizontal bars for top entries, drawn from a struct series.
 * Colours are CSS classes (.s0 .. .s7 for series, .ax .lbl .grid for the
 * frame) that the page styles for light, dark and print (html/report.c). */
#pragma once

#include <stdio.h>

#include "series.h"

#define SVG_SERIES_MAX 8 /* distinct colours; series_fold to this first */

/* Writes <figure class="chart"> with a title, the <svg> and its legend.
 * Every label and tooltip is HTML-escaped. -EIO on a write error. */
int svg_columns(FILE *f, const char *title, const struct series *s);
int svg_bars(FILE *f, const char *title, const struct series *s);

/* A value as an axis shows it: "$1.25", "$0.0030", "1.2M", "350k", "12". */
void svg_axis_value(enum series_unit unit, double v, char *buf, size_t cap);
