/* What several adapters' discovery code needs alike: user-written paths made
 * absolute, roots listed once, small files and their JSON strings read. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "adapter.h"
#include "json/jscan.h"

struct json_object;

/* `~` and `~/x` against home (as pi and OpenClaw do; `~user` is not
 * expanded), an absolute value as it is, anything else relative to base.
 * Trailing slashes are dropped ("/" stays). -EINVAL when home (for `~`) or
 * base (for a relative value) is NULL or not absolute, -ENAMETOOLONG when
 * the result does not fit cap. */
int adapt_resolve_path(const char *value, const char *home, const char *base, char *buf, size_t cap);

/* Appends a root for adapter unless one of its roots already has this path:
 * 1 added, 0 already listed, -ENOMEM. Strings that do not fit their field
 * are cut (path fits: both are PATH_MAX); env_var and detail may be NULL. */
int adapt_add_root(struct root_list *out, const struct adapter *adapter, const char *path,
                   const char *label, uint8_t reason, const char *env_var, const char *detail,
                   uint8_t max_depth);

/* Reads a whole regular file of at most max bytes into a NUL-terminated
 * malloc'd buffer (free it): 0 and *ret_text, *ret_len (bytes before the
 * added NUL; the file may hold NULs of its own). The file is read to its
 * end, whatever its size said. -errno from open/fstat/read, -EISDIR a
 * directory, -EINVAL another non-regular file (opened without blocking, so
 * a FIFO cannot hang the caller), -EFBIG more than max bytes, -ENOMEM. */
int adapt_read_file(const char *path, size_t max, char **ret_text, size_t *ret_len);

/* The string member key of a JSON object copied into buf: 0, or -ENOENT
 * when obj is NULL or not an object, or the member is missing, not a string,
 * empty, holds a NUL or does not fit (cap - 1 bytes). */
int adapt_json_str(struct json_object *obj, const char *key, char *buf, size_t cap);

/* Lexical clean of an absolute path in place, as Go's filepath.Clean: no
 * "//", "." or "..", no trailing '/'. A relative path is left as it is. */
void adapt_path_clean(char *path);

/* The directory part of path into out (cut to cap - 1 bytes): "." when it
 * has no '/', "/" for a file in the root. */
void adapt_path_dirname(const char *path, char *out, size_t cap);

/* Reads a whole file as one JSON value: 0 and *ret, -ENOENT/-EACCES/...,
 * -EISDIR/-EINVAL (not a regular file), -EFBIG (over max), -EBADMSG (not
 * JSON, or more than one value), -ENOMEM. */
int adapt_read_json(const char *path, size_t max, struct json_object **ret);
/* A member that is a string (*ret_len its length), else NULL; obj may be NULL. */
const char *adapt_get_str(struct json_object *obj, const char *key, size_t *ret_len);
/* A member of the given type (a json_type), else NULL; obj may be NULL. */
struct json_object *adapt_get_type(struct json_object *obj, const char *key, int type);
/* A token count as a file writes it: a positive integer, or an integral
 * number under 2^63; else (absent, negative, text, fractions below 1) 0.
 * The daemon refuses rows past its own bounds. */
uint64_t adapt_get_count(struct json_object *obj, const char *key);
/* a + b, UINT64_MAX when that overflows */
static inline uint64_t adapt_sat_add(uint64_t a, uint64_t b)
{
        return a + b < a ? UINT64_MAX : a + b;
}

/* A tool-call block of a message's content array, as pi ("toolCall") and
 * Claude Code ("tool_use") write them: {"type", "id", "name", "namespace"}. */
struct adapt_call_f {
        struct jscan_span id, name, ns;
};
/* The tool calls of one content array: n counts every block of the type,
 * v keeps the first ROW_CALLS_MAX (adapt_calls_stored of them). */
struct adapt_calls_f {
        uint32_t n;
        struct adapt_call_f v[ROW_CALLS_MAX];
};
/* Reads the value at s into calls (reset first): a content array's blocks
 * of the given type; a value that is not an array is skipped. */
bool adapt_read_calls(struct jscan *s, const char *type, struct adapt_calls_f *calls, int depth);
static inline uint32_t adapt_calls_stored(const struct adapt_calls_f *c)
{
        return c->n < ROW_CALLS_MAX ? c->n : ROW_CALLS_MAX;
}

/* What a JSONL parser does before it reads a line, the same for each: a
 * file found not to be a transcript stays so (PARSE_NOT_SOURCE); blanks
 * around the line go (*io_line, *io_len); an empty line is nothing
 * (PARSE_OK); once the header is seen, a line the adapter's prefilter says
 * cannot carry usage is passed over unread (PARSE_OK, or PARSE_MALFORMED
 * when it is not even a braced object). true: read the line; false: return
 * *ret_result. */
typedef bool (*adapt_line_filter)(const char *line, size_t len, const void *u);
bool adapt_line_begin(struct parse_state *ps, const char **io_line, size_t *io_len, adapt_line_filter may_matter,
                      const void *u, int *ret_result);

/* adapter.sibling_of for a harness that compresses an idle transcript x
 * into x.zst (and back): the other name of the two. */
int adapt_zst_sibling(const char *path, char *ret, size_t cap);

/* Whether name is a stem of at least one byte followed by suffix
 * ("a.jsonl" ends with ".jsonl"; ".jsonl" itself does not). */
bool adapt_ends_with(const char *name, const char *suffix);
/* Whether component idx (0-based) of the relative path rel is want. */
bool adapt_component_is(const char *rel, int idx, const char *want);
/* Whether path is (or links to) a directory. */
bool adapt_is_dir(const char *path);
