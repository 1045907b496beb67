/* `agentmeterctl report KIND --html`: the report as one self-contained page
 * (inline style and SVG, no script, nothing fetched): totals, charts, the
 * same table as the terminal with the same marks, and the legend. Light and
 * dark colour schemes follow the browser; printing uses the light one. */
#pragma once

#include <stdio.h>

struct json_object;

/* report: the report object (common/report/report.h). by_series: the same query
 * with a model (or harness) breakdown, used to stack the cost chart of a
 * daily, weekly, monthly or project report by model; NULL when the
 * report has its own breakdown or the kind stacks otherwise. generated:
 * when the page was made (shown in the footer), or NULL.
 * 0, -EINVAL (not a report), -ENOMEM, -EIO. */
int html_report(FILE *f, struct json_object *report, struct json_object *by_series,
                const char *generated);

/* Whether a kind's cost chart wants by_series (daily, weekly, monthly and
 * project without their own breakdown). */
int html_wants_series(const char *kind, const char *breakdown);

/* Its parts, for the live page of `agentmeterctl web`: the style sheet
 * (light, dark, print), the charts section of a report and its table. */
const char *html_report_style(void);
int html_report_charts(FILE *f, struct json_object *report, struct json_object *by_series);
int html_report_table(FILE *f, struct json_object *report);
