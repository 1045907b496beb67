/* The web view's access secret: 256 random bits as 64 hex digits, kept in a
 * 0600 file under $XDG_RUNTIME_DIR (gone at logout), so a restarted or
 * socket-activated `agentmeterctl web` and `web --url` agree on it. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define WEB_SECRET_LEN 64

/* $XDG_RUNTIME_DIR/agentmeterctl-web/secret, else the state directory's
 * web-secret. 0 or -errno. */
int web_secret_path(char *buf, size_t cap);
/* Reads the secret at path, making it (and its 0700 directory) when
 * missing. A file that is not ours, not a regular file, readable by others
 * or not 64 hex digits is refused: -EPERM or -EBADMSG, with why in err. */
int web_secret_load(const char *path, char ret_secret[WEB_SECRET_LEN + 1], char *err, size_t cap);
/* Whether s (may be NULL) is the secret; its time does not depend on where
 * they differ. */
bool web_secret_equal(const char *secret, const char *s);
