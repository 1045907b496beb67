/* The page, script and style sheet of `agentmeterctl web` (assets.h). The
 * script only ever puts the server's HTML (escaped there, web/view.c) into
 * the page and text through textContent; the Content-Security-Policy lets
 * it load nothing but these files and talk to nothing but this server. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html/report.h"
#include "web/assets.h"

const char web_page_html[] =
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        "<meta name=\"color-scheme\" content=\"light dark\">\n"
        "<meta name=\"referrer\" content=\"no-referrer\">\n"
        "<title>agentmeterd: live</title>\n"
        "<link rel=\"stylesheet\" href=\"/app.css\">\n"
        "<script src=\"/app.js\" defer></script>\n"
        "</head>\n<body>\n"
        "<header><h1>agentmeterd: live</h1>"
        "<p class=\"caption\"><span id=\"status\" class=\"status\">connecting</span> "
        "<span id=\"updated\"></span> <span id=\"problem\"></span></p></header>\n"
        "<main>\n<div id=\"view\"></div>\n"
        "<section class=\"calls\"><h2>Last calls</h2><div id=\"calls\"></div></section>\n</main>\n"
        "<footer><p id=\"legend\"></p></footer>\n"
        "</body>\n</html>\n";

const char web_denied_html[] =
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"color-scheme\" content=\"light dark\">\n<title>agentmeterd: secret needed</title>\n"
        "</head>\n<body>\n<h1>agentmeterd: secret needed</h1>\n"
        "<p>Open the address <code>agentmeterctl web</code> printed (or run "
        "<code>agentmeterctl web --url</code>): it carries the access secret.</p>\n"
        "</body>\n</html>\n";

static const char app_js[] =
        "'use strict';\n"
        "(function () {\n"
        "  const token = new URLSearchParams(location.search).get('token') || '';\n"
        "  const $ = (id) => document.getElementById(id);\n"
        "  let es = null;\n"
        "  function show(s) {\n"
        "    $('view').innerHTML = s.view;\n" /* HTML made and escaped by the server */
        "    $('calls').innerHTML = s.calls;\n"
        "    $('legend').textContent = s.legend;\n"
        "    $('problem').textContent = s.problem || '';\n"
        "    $('status').textContent = s.live ? (s.team ? 'team ledger' : 'live') : 'waiting for agentmeterd';\n"
        "    $('status').className = 'status ' + (s.live ? 'on' : 'off');\n"
        "    $('updated').textContent = 'updated ' + new Date().toLocaleTimeString();\n"
        "    document.body.dataset.state = 'shown';\n"
        "  }\n"
        "  function connect() {\n"
        "    es = new EventSource('/events?token=' + encodeURIComponent(token));\n"
        "    es.addEventListener('state', (e) => { try { show(JSON.parse(e.data)); } catch (x) {} });\n"
        "    es.onerror = () => { $('status').textContent = 'reconnecting'; $('status').className = 'status off'; };\n"
        "  }\n"
        "  connect();\n"
        "})();\n";

static const char own_style[] =
        "h2{font-size:16px;margin:18px 0 6px}\n"
        ".status{font-weight:600}.status.on{color:var(--c4)}.status.off{color:var(--c2)}\n"
        ".block{border:1px solid var(--line);border-radius:6px;padding:4px 14px;margin:12px 0}\n"
        ".tops{display:grid;grid-template-columns:repeat(auto-fit,minmax(300px,1fr));gap:0 20px}\n"
        ".tops table,.calls table{margin:4px 0}\n"
        "td{max-width:28em;overflow:hidden;text-overflow:ellipsis}\n"
        "@media (max-width:600px){body{margin:8px auto;padding:0 8px}.totals div{min-width:0;flex:1 1 40%}"
        "th,td{padding:3px 4px}}\n";

static char *style_sheet;
static pthread_once_t style_once = PTHREAD_ONCE_INIT;

static void make_style(void)
{
        const char *base = html_report_style();
        size_t a = strlen(base), b = strlen(own_style);
        style_sheet = malloc(a + b + 1);
        if (style_sheet) {
                memcpy(style_sheet, base, a);
                memcpy(style_sheet + a, own_style, b + 1);
        }
}

static const struct web_asset assets[] = {
        { "/app.js", "text/javascript; charset=utf-8", app_js },
        { "/app.css", "text/css; charset=utf-8", NULL },
};

const struct web_asset *web_asset_find(const char *path)
{
        for (size_t i = 0; i < sizeof(assets) / sizeof(assets[0]); i++)
                if (strcmp(assets[i].path, path) == 0)
                        return &assets[i];
        return NULL;
}

const char *web_asset_text(const struct web_asset *a)
{
        if (a->body)
                return a->body;
        pthread_once(&style_once, make_style);
        return style_sheet ? style_sheet : own_style;
}
