/* journald or console sink for daemon messages. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <systemd/sd-journal.h>
#include <unistd.h>

#include "log.h"

static enum log_target log_target_active = LOG_TARGET_CONSOLE;
static int log_level = LOG_INFO;

/* $JOURNAL_STREAM is "dev:ino" of the stream systemd connected to our stderr. */
static int stderr_is_journal(void)
{
        const char *js = getenv("JOURNAL_STREAM");
        unsigned long long dev, ino;
        struct stat st;

        if (!js || sscanf(js, "%llu:%llu", &dev, &ino) != 2)
                return 0;
        if (fstat(STDERR_FILENO, &st) < 0)
                return 0;
        return st.st_dev == (dev_t)dev && st.st_ino == (ino_t)ino;
}

void log_setup(enum log_target target, int max_level)
{
        log_level = max_level;
        if (target == LOG_TARGET_AUTO) {
                if (stderr_is_journal())
                        target = LOG_TARGET_JOURNAL;
                else if (!isatty(STDERR_FILENO) && access("/run/systemd/journal/socket", W_OK) == 0 &&
                         getenv("AGENTMETER_LOG_CONSOLE") == NULL)
                        target = LOG_TARGET_JOURNAL;
                else
                        target = LOG_TARGET_CONSOLE;
        }
        log_target_active = target;
}

int log_target_parse(const char *s, enum log_target *ret)
{
        if (strcmp(s, "auto") == 0)
                *ret = LOG_TARGET_AUTO;
        else if (strcmp(s, "console") == 0)
                *ret = LOG_TARGET_CONSOLE;
        else if (strcmp(s, "journal") == 0)
                *ret = LOG_TARGET_JOURNAL;
        else
                return -EINVAL;
        return 0;
}

static const char *level_word(int level)
{
        switch (level) {
        case LOG_EMERG: case LOG_ALERT: case LOG_CRIT: case LOG_ERR:
                return "error";
        case LOG_WARNING:
                return "warning";
        case LOG_DEBUG:
                return "debug";
        default:
                return NULL;
        }
}

int log_full(int level, const char *adapter, const char *source, int err, const char *fmt, ...)
{
        char msg[2048];
        int saved = errno;
        va_list ap;
        size_t n;

        if (level > log_level)
                return err;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        n = strlen(msg);
        if (err < 0 && n < sizeof(msg))
                snprintf(msg + n, sizeof(msg) - n, ": %s", strerror(-err));

        if (log_target_active == LOG_TARGET_JOURNAL) {
                sd_journal_send("MESSAGE=%s", msg, "PRIORITY=%d", level,
                                "SYSLOG_IDENTIFIER=agentmeterd",
                                "AGENTMETER_ADAPTER=%s", adapter ? adapter : "",
                                "AGENTMETER_SOURCE=%s", source ? source : "",
                                "ERRNO=%d", err < 0 ? -err : 0, NULL);
        } else {
                const char *w = level_word(level);
                fprintf(stderr, "agentmeterd: %s%s%s%s%s%s%s\n", w ? w : "", w ? ": " : "",
                        adapter ? adapter : "", adapter ? ": " : "", source ? source : "",
                        source ? ": " : "", msg);
        }
        errno = saved;
        return err;
}

int log_fields(int level, const char *const *fields, const char *fmt, ...)
{
        char msg[2048], head[2100], prio[32];
        struct iovec iov[20];
        size_t n = 0;
        int saved = errno;
        va_list ap;

        if (level > log_level)
                return 0;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        if (log_target_active != LOG_TARGET_JOURNAL) {
                const char *w = level_word(level);
                fprintf(stderr, "agentmeterd: %s%s%s\n", w ? w : "", w ? ": " : "", msg);
                errno = saved;
                return 0;
        }
        snprintf(head, sizeof(head), "MESSAGE=%s", msg);
        snprintf(prio, sizeof(prio), "PRIORITY=%d", level);
        iov[n++] = (struct iovec){ head, strlen(head) };
        iov[n++] = (struct iovec){ prio, strlen(prio) };
        iov[n++] = (struct iovec){ (char *)"SYSLOG_IDENTIFIER=agentmeterd", 29 };
        for (size_t i = 0; fields && fields[i] && n < sizeof(iov) / sizeof(iov[0]); i++)
                iov[n++] = (struct iovec){ (char *)fields[i], strlen(fields[i]) };
        sd_journal_sendv(iov, (int)n);
        errno = saved;
        return 0;
}
