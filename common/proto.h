/* The control-socket protocol: newline-delimited JSON, one request object
 * per line, one response object per line (a `tail` request then streams
 * event objects until the client leaves). Versioned by "v".
 *
 * request:  {"v":1,"cmd":"status"|"sources"|"report"|"rescan"|"tail"|"version", ...args}
 * response: {"v":1,"ok":true,"result":{...}}
 *           {"v":1,"ok":false,"error":{"code":"bad-request"|"unknown-command"|
 *                                       "too-large"|"internal"|"busy","message":"..."}}
 * tail:     {"v":1,"ok":true,"result":{"streaming":true}} then {"v":1,"event":"row","row":{...}}
 */
#pragma once

#include <stddef.h>

struct json_object;

#define PROTO_VERSION 1
#define PROTO_REQUEST_MAX (64u * 1024u)
#define PROTO_RESPONSE_MAX (256u * 1024u * 1024u)

/* Serialises obj plus '\n' into a malloc'd buffer. */
int proto_encode(struct json_object *obj, char **ret_buf, size_t *ret_len);

/* Parses one request line: -EBADMSG (not a JSON object), -EPROTONOSUPPORT
 * ("v" present and not PROTO_VERSION), 0 and the object + its "cmd". */
int proto_parse_request(const char *line, size_t len, struct json_object **ret_req,
                        const char **ret_cmd, const char **ret_error);

struct json_object *proto_ok(struct json_object *result);            /* takes result */
struct json_object *proto_error(const char *code, const char *message);
struct json_object *proto_event(const char *event, struct json_object *payload); /* takes payload */

/* Client side: connect to the socket path; -errno (ENOENT/ECONNREFUSED: no daemon). */
int proto_connect(const char *path, int *ret_fd);
/* Sends a request and reads one response line (timeout in ms). */
int proto_call(int fd, struct json_object *req, int timeout_ms, struct json_object **ret_resp);
/* ... the line as it came (malloc'd, no newline), and its parse: -EBADMSG
 * (not one JSON object), -EPROTONOSUPPORT (another "v"). */
int proto_call_line(int fd, struct json_object *req, int timeout_ms, char **ret_line, size_t *ret_len);
int proto_parse_response(const char *line, size_t len, struct json_object **ret_resp);
/* A success response as proto_ok and proto_encode write it, without
 * parsing it: the text of its result (a slice of line), or -EBADMSG for
 * anything else (an error, another writer's order), to be parsed instead. */
int proto_ok_result_text(const char *line, size_t len, const char **ret_text, size_t *ret_len);

/* A result whose JSON text is made already (a report: jsonw.h): a value
 * that prints as text wherever it sits, e.g. in proto_ok. Takes text. */
struct json_object *proto_raw(char *text);
/* proto_encode(proto_ok(result)), taking result: a proto_raw result's
 * text is copied once into the line, not printed through json-c's buffer
 * (a report of years of days is ~350 KB). */
int proto_encode_ok(struct json_object *result, char **ret_buf, size_t *ret_len);
/* Reads one line from fd into a malloc'd buffer (max bytes), blocking with timeout (-1 = none). */
int proto_read_line(int fd, size_t max, int timeout_ms, char **ret_line, size_t *ret_len);
