/* Escaping text for the terminal: C0, DEL and C1 controls and invalid
 * UTF-8 become \xNN; valid text (wide characters too) passes; truncation
 * never splits a character or an escape. */
#include "termtext.h"
#include "tap.h"

int main(void)
{
        char b[64];

        is_str(termtext("model-a", b, sizeof(b)), "model-a", "plain text unchanged");
        is_str(termtext(NULL, b, sizeof(b)), "", "NULL reads as empty");
        is_str(termtext("a\x1b[2Jb", b, sizeof(b)), "a\\x1b[2Jb", "ESC escaped");
        is_str(termtext("t\ta\nb\x7f", b, sizeof(b)), "t\\x09a\\x0ab\\x7f", "tab, newline, DEL escaped");
        is_str(termtext("\xc2\x9b" "31m", b, sizeof(b)), "\\xc2\\x9b31m", "C1 CSI (U+009B) escaped");
        is_str(termtext("\xff\xfe", b, sizeof(b)), "\\xff\\xfe", "invalid bytes escaped");
        is_str(termtext("\xc0\xaf", b, sizeof(b)), "\\xc0\\xaf", "overlong encoding escaped");
        is_str(termtext("\xed\xa0\x80", b, sizeof(b)), "\\xed\\xa0\\x80", "surrogate escaped");
        is_str(termtext("模型 — ok", b, sizeof(b)), "模型 — ok", "wide and symbol characters kept");
        char small[6];
        is_str(termtext("模型x", small, sizeof(small)), "模", "truncated on a character boundary");
        is_str(termtext("ab\x1b", small, sizeof(small)), "ab", "an escape is never cut in half");
        return tap_done();
}
