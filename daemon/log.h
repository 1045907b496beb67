/* Logging for the daemon: structured journald entries (AGENTMETER_* fields)
 * under systemd, readable console lines otherwise. Only daemon/ logs. */
#pragma once

#include <syslog.h>

enum log_target { LOG_TARGET_AUTO = 0, LOG_TARGET_CONSOLE, LOG_TARGET_JOURNAL };

void log_setup(enum log_target target, int max_level);
int log_target_parse(const char *s, enum log_target *ret);

/* Logs one message; adapter/source may be NULL. err is a negative errno or 0
 * (appended as ": <strerror>"). Returns err, so `return log_errno(...)` works. */
int log_full(int level, const char *adapter, const char *source, int err, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));

/* Logs one message with extra journald fields (NULL-terminated "KEY=value"
 * strings, at most 16); the console shows the message alone. */
int log_fields(int level, const char *const *fields, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

#define log_error(...)   log_full(LOG_ERR, NULL, NULL, 0, __VA_ARGS__)
#define log_warning(...) log_full(LOG_WARNING, NULL, NULL, 0, __VA_ARGS__)
#define log_notice(...)  log_full(LOG_NOTICE, NULL, NULL, 0, __VA_ARGS__)
#define log_info(...)    log_full(LOG_INFO, NULL, NULL, 0, __VA_ARGS__)
#define log_debug(...)   log_full(LOG_DEBUG, NULL, NULL, 0, __VA_ARGS__)
#define log_errno(level, err, ...) log_full((level), NULL, NULL, (err), __VA_ARGS__)
