/* SVG drawing for the HTML report. Coordinates are in a fixed viewBox that
 * scales to the page's width; text is drawn in the page's font. A segment's
 * <title> is its tooltip: category, series and the figure as the table
 * shows it (marks included) when the caller gave one. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "html/escape.h"
#include "html/svg.h"
#include "table.h"

#define COL_W 960
#define COL_H 320
#define M_LEFT 72
#define M_RIGHT 12
#define M_TOP 12
#define LABEL_MAX 42 /* display columns of a bar label before it is cut */

void svg_axis_value(enum series_unit unit, double v, char *buf, size_t cap)
{
        if (unit == SERIES_USD)
                snprintf(buf, cap, v == 0 || v >= 1 ? "$%.2f" : v >= 0.01 ? "$%.3f" : "$%.4f", v);
        else if (v >= 1e9)
                snprintf(buf, cap, "%.3gG", v / 1e9);
        else if (v >= 1e6)
                snprintf(buf, cap, "%.3gM", v / 1e6);
        else if (v >= 1e3)
                snprintf(buf, cap, "%.3gk", v / 1e3);
        else
                snprintf(buf, cap, "%.0f", v);
}

/* A step of 1, 2 or 5 times a power of ten giving about four grid lines. */
static double nice_step(double max)
{
        double raw = max / 4, p, m;

        if (raw <= 0)
                return 1;
        p = pow(10, floor(log10(raw)));
        m = raw / p;
        return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

static void tip(FILE *f, const struct series *s, size_t c, size_t k)
{
        const char *t = s->tips[c * s->n_series + k];
        char buf[64];

        fputs("<title>", f);
        html_escape(f, s->cats[c]);
        if (s->n_series > 1 || strcmp(s->names[k], "") != 0) {
                fputs(" \xc2\xb7 ", f);
                html_escape(f, s->names[k]);
        }
        fputs(": ", f);
        if (!t) {
                svg_axis_value(s->unit, s->v[c * s->n_series + k], buf, sizeof(buf));
                t = buf;
        }
        html_escape(f, t);
        fputs("</title>", f);
}

static void legend(FILE *f, const struct series *s)
{
        if (s->n_series < 2)
                return;
        fputs("<ul class=\"legend\">", f);
        for (size_t k = 0; k < s->n_series; k++) {
                fprintf(f, "<li><span class=\"sw s%zu\"></span>", k % SVG_SERIES_MAX);
                html_escape(f, s->names[k]);
                fputs("</li>", f);
        }
        fputs("</ul>", f);
}

/* The label cut to LABEL_MAX columns on a character boundary, with "…";
 * with left, its end is kept ("…/a/b/c"). */
static void label(FILE *f, const char *s, bool left)
{
        size_t n = strlen(s);
        char buf[4 * LABEL_MAX + 8];

        if (table_width(s) <= LABEL_MAX) {
                html_escape(f, s);
                return;
        }
        if (left) {
                const char *p = s;
                while (*p && table_width(p) > LABEL_MAX - 1) {
                        p++;
                        while (((unsigned char)*p & 0xc0) == 0x80)
                                p++;
                }
                fputs("\xe2\x80\xa6", f);
                html_escape(f, p);
                return;
        }
        snprintf(buf, sizeof(buf), "%s", s);
        n = strlen(buf);
        while (n > 0 && table_width(buf) > LABEL_MAX - 1) {
                do
                        n--;
                while (n > 0 && ((unsigned char)buf[n] & 0xc0) == 0x80);
                buf[n] = 0;
        }
        html_escape(f, buf);
        fputs("\xe2\x80\xa6", f);
}

static void begin(FILE *f, const char *title, int w, int h, const char *kind)
{
        fprintf(f, "<figure class=\"chart %s\"><figcaption>", kind);
        html_escape(f, title);
        /* inline SVG in HTML needs no xmlns: the page holds no URL at all */
        fprintf(f, "</figcaption><svg viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"", w, h);
        html_escape(f, title);
        fputs("\">", f);
}

static int end(FILE *f, const struct series *s)
{
        fputs("</svg>", f);
        legend(f, s);
        fputs("</figure>\n", f);
        return ferror(f) ? -EIO : 0;
}

/* Room under the plot for the slanted labels: about 4 units per character. */
static int bottom_margin(const struct series *s)
{
        size_t longest = 0;
        for (size_t c = 0; c < s->n_cats; c++) {
                size_t w = table_width(s->cats[c]);
                longest = w > longest ? w : longest;
        }
        return 24 + 4 * (int)(longest < LABEL_MAX ? longest : LABEL_MAX);
}

int svg_columns(FILE *f, const char *title, const struct series *s)
{
        double max = series_max_stack(s), step = nice_step(max), top;
        int bottom = bottom_margin(s), height = COL_H - 64 + bottom;
        double pw = COL_W - M_LEFT - M_RIGHT, ph = height - M_TOP - bottom;
        size_t n = s->n_cats, every;
        char buf[64];

        top = max > 0 ? ceil(max / step) * step : 1;
        begin(f, title, COL_W, height, "columns");
        /* grid and y axis labels */
        for (double y = 0; y <= top + step / 2; y += step) {
                double py = M_TOP + ph - y / top * ph;
                svg_axis_value(s->unit, y, buf, sizeof(buf));
                fprintf(f, "<line class=\"grid\" x1=\"%d\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
                           "<text class=\"lbl\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>",
                        M_LEFT, M_LEFT + pw, py, py, M_LEFT - 6, py + 4, buf);
        }
        every = n > 16 ? (n + 15) / 16 : 1; /* at most 16 x labels */
        for (size_t c = 0; c < n; c++) {
                double slot = pw / (double)n, bw = slot * 0.78, x = M_LEFT + c * slot + (slot - bw) / 2;
                double y = M_TOP + ph;
                fputs("<g>", f);
                for (size_t k = 0; k < s->n_series; k++) {
                        double v = s->v[c * s->n_series + k], h = v > 0 ? v / top * ph : 0;
                        if (h <= 0)
                                continue;
                        if (h < 0.5)
                                h = 0.5; /* a sliver, not nothing */
                        y -= h;
                        fprintf(f, "<rect class=\"s%zu\" x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\">",
                                k % SVG_SERIES_MAX, x, y, bw, h);
                        tip(f, s, c, k);
                        fputs("</rect>", f);
                }
                fputs("</g>", f);
                if (c % every == 0) {
                        double lx = x + bw / 2, ly = M_TOP + ph + 14;
                        fprintf(f, "<text class=\"lbl\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" "
                                   "transform=\"rotate(-35 %.1f %.1f)\">", lx, ly, lx, ly);
                        label(f, s->cats[c], s->cut_left);
                        fputs("</text>", f);
                }
        }
        fprintf(f, "<line class=\"ax\" x1=\"%d\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", M_LEFT,
                M_LEFT + pw, M_TOP + ph, M_TOP + ph);
        return end(f, s);
}

#define BAR_H 22
#define BAR_GAP 8
#define BAR_LABEL_W 300
#define BAR_VALUE_W 110

int svg_bars(FILE *f, const char *title, const struct series *s)
{
        double max = series_max_stack(s);
        int h = M_TOP + (int)s->n_cats * (BAR_H + BAR_GAP) + 8;
        double pw = COL_W - BAR_LABEL_W - BAR_VALUE_W;
        char buf[64];

        if (max <= 0)
                max = 1;
        begin(f, title, COL_W, h, "bars");
        for (size_t c = 0; c < s->n_cats; c++) {
                double y = M_TOP + c * (BAR_H + BAR_GAP), x = BAR_LABEL_W;
                fprintf(f, "<text class=\"lbl\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">", BAR_LABEL_W - 8,
                        y + BAR_H * 0.7);
                label(f, s->cats[c], s->cut_left);
                fputs("</text><g>", f);
                for (size_t k = 0; k < s->n_series; k++) {
                        double v = s->v[c * s->n_series + k], w = v > 0 ? v / max * pw : 0;
                        if (w <= 0)
                                continue;
                        if (w < 0.5)
                                w = 0.5;
                        fprintf(f, "<rect class=\"s%zu\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\">",
                                k % SVG_SERIES_MAX, x, y, w, BAR_H);
                        tip(f, s, c, k);
                        fputs("</rect>", f);
                        x += w;
                }
                /* the figure: the cell's own text when there is one series */
                const char *t = s->n_series == 1 ? s->tips[c] : NULL;
                if (!t) {
                        svg_axis_value(s->unit, series_cat_sum(s, c), buf, sizeof(buf));
                        t = buf;
                }
                fprintf(f, "</g><text class=\"lbl val\" x=\"%.1f\" y=\"%.1f\">", x + 6, y + BAR_H * 0.7);
                html_escape(f, t);
                fputs("</text>", f);
        }
        return end(f, s);
}
