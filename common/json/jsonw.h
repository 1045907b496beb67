/* A JSON text writer for big answers (reports of thousands of rows): text
 * appended to one growing buffer, no object per value. Its text is what
 * json-c prints with JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE
 * for the same values, byte for byte, so a client may print it as it came
 * or parse and print it again with the same result. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSONW_DEPTH_MAX 32

struct jsonw {
        char *buf;
        size_t len, cap;
        int err;             /* first failure (-ENOMEM, -EOVERFLOW nesting), sticky */
        unsigned depth;
        uint32_t has_items;  /* bit d: the container at depth d has an item */
        bool after_key;      /* a key was written: its value follows, no comma */
};

/* Containers and keys. A key is written as a JSON string. */
void jsonw_object_begin(struct jsonw *w);
void jsonw_object_end(struct jsonw *w);
void jsonw_array_begin(struct jsonw *w);
void jsonw_array_end(struct jsonw *w);
void jsonw_key(struct jsonw *w, const char *key);

/* Values. jsonw_number writes text that is already a JSON number ("1.5"). */
void jsonw_string(struct jsonw *w, const char *s);
void jsonw_int(struct jsonw *w, int64_t v);
void jsonw_number(struct jsonw *w, const char *text);
void jsonw_bool(struct jsonw *w, bool v);
void jsonw_null(struct jsonw *w);
/* A whole value whose text this writer made before (a cached report row):
 * its bytes as they are, after the comma its place needs. */
void jsonw_value_text(struct jsonw *w, const char *text, size_t len);

/* "key": value in one call; jsonw_key_string_or_null writes null for NULL or "". */
void jsonw_key_string(struct jsonw *w, const char *key, const char *s);
void jsonw_key_string_or_null(struct jsonw *w, const char *key, const char *s);
void jsonw_key_int(struct jsonw *w, const char *key, int64_t v);
void jsonw_key_bool(struct jsonw *w, const char *key, bool v);
void jsonw_key_null(struct jsonw *w, const char *key);

/* The text (NUL-terminated, malloc'd, taken over) once every container is
 * closed: 0, or the writer's first error (-ENOMEM), or -EINVAL when a
 * container is still open. The writer is empty afterwards either way. */
int jsonw_finish(struct jsonw *w, char **ret_text, size_t *ret_len);
void jsonw_free(struct jsonw *w);
