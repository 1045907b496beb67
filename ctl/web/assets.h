/* The live page's own files, served by the program itself (nothing from
 * elsewhere): the HTML shell, its script and its style sheet (the HTML
 * report's, light and dark, and a few rules of its own). None holds data:
 * the figures come from /api/state and /events, behind the secret. */
#pragma once

#include <stddef.h>

struct web_asset {
        const char *path;  /* "/app.js" */
        const char *type;  /* Content-Type */
        const char *body;  /* NULL: the style sheet, made once (web_asset_style) */
};

/* The asset at path (exact), or NULL. */
const struct web_asset *web_asset_find(const char *path);
/* The page's HTML, and the text of an asset (the style sheet joined once). */
const char *web_asset_text(const struct web_asset *a);
extern const char web_page_html[];
extern const char web_denied_html[];
