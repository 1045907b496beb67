/* A Prometheus text exposition writer: families in the order declared,
 * HELP and TYPE once each, series sorted by their label text, label values
 * escaped (and made valid UTF-8 without control characters), exact decimal
 * values from integers with a fixed scale. No duplicate series: adding to
 * one that exists adds to its value. */
#pragma once

#include <stddef.h>
#include <stdint.h>

enum expo_type { EXPO_COUNTER, EXPO_GAUGE };

struct expo;

int expo_new(struct expo **ret);
struct expo *expo_free(struct expo *e); /* NULL-safe, returns NULL */

/* Declares a family. scale: value units per 1 (1: integers; 1000: values
 * are thousandths; 1000000000: nano-units), a power of ten up to 1e18.
 * -EINVAL (bad name or scale), -EEXIST, -ENOMEM. */
int expo_family(struct expo *e, const char *name, enum expo_type type, const char *help,
                uint64_t scale);

/* The series of `family` with these labels ({"name", "value", ..., NULL}; the
 * same names in the same order for every series of a family) gets v added
 * (expo_add) or is raised to at least v (expo_max); created at 0.
 * -ENOENT (no such family), -EINVAL (bad label name), -ENOMEM. */
int expo_add(struct expo *e, const char *family, const char *const *labels, int64_t v);
int expo_max(struct expo *e, const char *family, const char *const *labels, int64_t v);

/* Raises (or creates) a series given by its full text `name{labels}` as
 * expo_foreach_counter shows it (e.g. read back from a saved high-water
 * mark). -ENOENT when no counter family has that name, -EINVAL when the
 * text does not look like a series of it. */
int expo_max_series(struct expo *e, const char *series, int64_t v);

/* Calls cb for every series of every counter family: its text
 * `name{labels}` and its value, which cb may raise (high-water marks). */
int expo_foreach_counter(struct expo *e, int (*cb)(const char *series, int64_t *value, void *u),
                         void *u);

/* The whole exposition, malloc'd, ending in a newline. -ENOMEM. */
int expo_render(const struct expo *e, char **ret_text, size_t *ret_len);

/* Writes a label value escaped for the format (\\, \", \n) into a malloc'd
 * string; bytes that are not UTF-8 and control characters become U+FFFD. */
int expo_escape_label(const char *s, char **ret);
