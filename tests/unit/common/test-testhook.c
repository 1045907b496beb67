/* test_hook_number: a hook's value is used only when it is all decimal
 * digits and inside the caller's range; anything else is the default. */
#include <stdlib.h>

#include "tap.h"
#include "testhook.h"

#define HOOK "AGENTMETER_TEST_UNIT_HOOK"

static unsigned long long with(const char *value)
{
        if (value)
                setenv(HOOK, value, 1);
        else
                unsetenv(HOOK);
        return test_hook_number(HOOK, 5, 1000, 77);
}

int main(void)
{
        ok(with(NULL) == 77, "unset: the default");
        ok(with("") == 77, "empty: the default");
        ok(with("250") == 250, "a number in range is used");
        ok(with("5") == 5 && with("1000") == 1000, "both ends of the range are in it");
        ok(with("4") == 77 && with("1001") == 77, "just outside the range: the default");
        ok(with("12ms") == 77, "trailing text: the default, not its leading number");
        ok(with("-3") == 77, "a minus sign: the default (strtoull would wrap it)");
        ok(with("99999999999999999999999") == 77, "past unsigned long long: the default");
        ok(with("0x10") == 77, "not decimal: the default");
        ok(with(" 7") == 77 && with("+7") == 77, "a leading space or plus: the default");
        setenv(HOOK, "-3", 1);
        ok(test_hook_number(HOOK, 1, ~0ULL, 9) == 9, "a minus sign with no upper bound: still the default");
        setenv(HOOK, "0", 1);
        ok(test_hook_number(HOOK, 0, 10, 3) == 0, "0 is a value when the range allows it");
        return tap_done();
}
