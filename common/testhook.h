/* Test hooks: numbers from the environment (AGENTMETER_TEST_*) in place of
 * built-in sizes and times, so tests reach a bound without waiting for it.
 * One parser for all of them; each caller names its hook and its range. */
#pragma once

/* name's value when it is all decimal digits and in [min, max], else dflt. */
unsigned long long test_hook_number(const char *name, unsigned long long min, unsigned long long max,
                                    unsigned long long dflt);
