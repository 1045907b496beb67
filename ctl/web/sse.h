/* Server-sent events for one browser: the hub's state each time it changes
 * ("event: state", the sequence number as the id), a comment every 15 s so
 * a closed tab is noticed, the end when the server stops. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct web_hub;
struct web_sse;

struct web_sse *web_sse_new(struct web_hub *hub);
/* libmicrohttpd's content reader and its free callback (cls: a web_sse). */
ssize_t web_sse_read(void *cls, uint64_t pos, char *buf, size_t max);
void web_sse_free(void *cls);
