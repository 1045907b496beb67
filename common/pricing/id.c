/* Model-id normalisation for pricing: the forms routers, clouds and dated
 * releases give one model, reduced to the table's canonical id by explicit
 * rules, applied in order. No fuzzy matching: an id no rule reduces to a
 * table id is unpriced (gpt-5.4-pro is not gpt-5.4). */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "pricing/pricing.h"

static bool all_digits(const char *s, size_t n)
{
        for (size_t i = 0; i < n; i++)
                if (!isdigit((unsigned char)s[i]))
                        return false;
        return n > 0;
}

static bool starts(const char *s, const char *prefix)
{
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Rule 5: Bedrock model version "-v1:0" / "-v2" at the end (Bedrock ids only). */
static void drop_bedrock_version(char *s)
{
        char *v = strrchr(s, '-');
        if (!v || v[1] != 'v')
                return;
        const char *num = v + 2, *colon = strchr(num, ':');
        size_t n1 = colon ? (size_t)(colon - num) : strlen(num);
        if (!all_digits(num, n1) || (colon && !all_digits(colon + 1, strlen(colon + 1))))
                return;
        *v = 0;
}

/* Rule 7: a trailing release date: "-YYYYMMDD" (Anthropic) or "-YYYY-MM-DD"
 * (OpenAI). Exactly 8 digits starting 20, or the dashed form. */
static void drop_date(char *s)
{
        size_t n = strlen(s);
        if (n > 9 && s[n - 9] == '-' && all_digits(s + n - 8, 8) && s[n - 8] == '2' && s[n - 7] == '0') {
                s[n - 9] = 0;
                return;
        }
        if (n > 11 && s[n - 11] == '-' && all_digits(s + n - 10, 4) && s[n - 6] == '-' &&
            all_digits(s + n - 5, 2) && s[n - 3] == '-' && all_digits(s + n - 2, 2) &&
            s[n - 10] == '2' && s[n - 9] == '0')
                s[n - 11] = 0;
}

/* Rule 6: Claude ids written with a dotted version by routers
 * ("claude-opus-4.6" -> "claude-opus-4-6"); other vendors' dots stay. */
static void claude_dots(char *s)
{
        if (!starts(s, "claude-"))
                return;
        for (char *c = s; *c; c++)
                if (*c == '.' && c > s && isdigit((unsigned char)c[-1]) && isdigit((unsigned char)c[1]))
                        *c = '-';
}

int price_normalise_id(const char *id, char *ret_id, size_t cap, char *ret_region, size_t region_cap)
{
        char buf[ROW_MODEL_MAX], *s = buf, *at, *slash;
        size_t n = id ? strlen(id) : 0;
        bool bedrock = false;

        if (n == 0 || n >= sizeof(buf) || cap == 0 || region_cap == 0)
                return -EINVAL;
        /* Rule 1: ids are compared in lower case */
        for (size_t i = 0; i <= n; i++)
                buf[i] = (char)tolower((unsigned char)id[i]);
        ret_region[0] = 0;
        /* Rule 2: router / provider paths: the last segment is the model
         * ("openrouter/anthropic/claude-opus-4.6", "openai/gpt-5.1-codex") */
        slash = strrchr(s, '/');
        if (slash)
                s = slash + 1;
        /* Rule 3: Vertex "@version" ("claude-opus-4-6@default",
         * "claude-sonnet-4-5@20250929") */
        at = strchr(s, '@');
        if (at)
                *at = 0;
        /* Rule 4: Bedrock: a cross-region profile ("us.", "eu.", "apac.",
         * "global.") and the vendor prefix "anthropic."; eu. profiles carry
         * a regional uplift, named by the tier token "region-eu" */
        static const char *const geos[] = {"us.", "eu.", "apac.", "global.", "au.", "jp.", NULL};
        for (size_t i = 0; geos[i]; i++) {
                size_t g = strlen(geos[i]);
                if (starts(s, geos[i]) && starts(s + g, "anthropic.")) {
                        if (strcmp(geos[i], "eu.") == 0)
                                snprintf(ret_region, region_cap, "region-eu");
                        s += g;
                        break;
                }
        }
        if (starts(s, "anthropic.")) {
                s += strlen("anthropic.");
                bedrock = true;
        }
        if (bedrock)
                drop_bedrock_version(s);
        claude_dots(s);
        drop_date(s);
        if (!*s || strlen(s) >= cap)
                return -EINVAL;
        memmove(ret_id, s, strlen(s) + 1);
        return 0;
}
