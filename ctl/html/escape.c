/* HTML escaping for the report page: the five characters that can change
 * the markup become entities; every other byte is written as it is (the
 * cells arrive escaped for a terminal already, termtext.h, so no controls). */
#include <string.h>

#include "html/escape.h"

int html_escape_n(FILE *f, const char *s, size_t n)
{
        size_t start = 0;

        if (!s)
                return 0;
        for (size_t i = 0; i < n; i++) {
                const char *ent;
                switch (s[i]) {
                case '&': ent = "&amp;"; break;
                case '<': ent = "&lt;"; break;
                case '>': ent = "&gt;"; break;
                case '"': ent = "&quot;"; break;
                case '\'': ent = "&#39;"; break;
                default: continue;
                }
                if (i > start && fwrite(s + start, 1, i - start, f) != i - start)
                        return EOF;
                if (fputs(ent, f) == EOF)
                        return EOF;
                start = i + 1;
        }
        if (n > start && fwrite(s + start, 1, n - start, f) != n - start)
                return EOF;
        return 0;
}

int html_escape(FILE *f, const char *s)
{
        return s ? html_escape_n(f, s, strlen(s)) : 0;
}
