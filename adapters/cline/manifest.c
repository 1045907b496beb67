/* The Cline session manifest (<session>/<session>.json), read for the one
 * thing a message lacks: the session's working directory (and the current
 * model, for a message written without modelInfo). Its usage totals repeat
 * the messages' own figures and are never read here. The hub rewrites it in
 * place, so it may be caught half-written: the members before the damage
 * are kept (cwd comes early), the scan stops once it has what it needs. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "adapt-util.h"
#include "cline/cline.h"
#include "json/jscan.h"

_Static_assert(ROW_PROJECT_MAX <= JSCAN_SET_MAX, "the project fits jscan_span_set");

struct man_scan {
        struct jscan_span cwd, workspace_root, provider, model;
};

static bool have_all(const struct man_scan *m)
{
        return m->cwd.p && m->workspace_root.p && m->provider.p && m->model.p;
}

static bool man_key(struct jscan *s, const struct jscan_span *k, void *u, int depth)
{
        struct man_scan *m = u;
        bool ok;

        if (JSCAN_KEY_IS(k, "cwd"))
                ok = jscan_read_str(s, &m->cwd, depth);
        else if (JSCAN_KEY_IS(k, "workspace_root"))
                ok = jscan_read_str(s, &m->workspace_root, depth);
        else if (JSCAN_KEY_IS(k, "provider"))
                ok = jscan_read_str(s, &m->provider, depth);
        else if (JSCAN_KEY_IS(k, "model"))
                ok = jscan_read_str(s, &m->model, depth);
        else
                ok = jscan_skip(s, depth);
        /* everything wanted is in hand: stop (the prompt and metadata after
         * it can be long, and are of no use here) */
        return ok && !have_all(m);
}

int cline_manifest_read(const char *path, struct cline_manifest *ret)
{
        struct man_scan m = { 0 };
        struct jscan s;
        char *text;
        size_t len;
        int r = adapt_read_file(path, CLINE_MANIFEST_MAX, &text, &len);

        if (r < 0)
                return r;
        s = (struct jscan){ text, text + len };
        jscan_ws(&s);
        if (jscan_at(&s, '{'))
                (void)jscan_object(&s, man_key, &m, 0); /* false: stopped early, or damage */
        if (!m.cwd.p && !m.workspace_root.p) {
                free(text);
                return -EBADMSG;
        }
        memset(ret, 0, sizeof(*ret));
        jscan_span_set(ret->cwd, sizeof(ret->cwd), m.cwd.p && m.cwd.n ? &m.cwd : &m.workspace_root);
        jscan_span_set(ret->provider, sizeof(ret->provider), &m.provider);
        jscan_span_set(ret->model, sizeof(ret->model), &m.model);
        free(text);
        return 0;
}
