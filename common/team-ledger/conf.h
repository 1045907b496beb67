/* The team ledger's configuration, ${XDG_CONFIG_HOME:-~/.config}/agentmeterd/
 * team.conf: `url =` (a libpq connection string or URI), `machine =`
 * (default the host name), `user =` (default the login name), and the
 * timeouts. Read by the daemon (push) and agentmeterctl (team init,
 * reports --team). No file: no team, nothing changes. Format in
 * agentmeterd(8), "TEAM LEDGER". */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define TEAM_CONF_FILE "team.conf"
#define TEAM_CONF_MAX (64u * 1024u) /* a bigger file is refused */
#define TEAM_URL_MAX 2048
#define TEAM_NAME_MAX 64
#define TEAM_KEY_HEX 32              /* the machine's stable identity, hex */
#define TEAM_ERROR_MAX 512

struct team_conf {
        char url[TEAM_URL_MAX];
        char machine[TEAM_NAME_MAX];  /* as configured, else the host name */
        bool machine_set;
        char user[TEAM_NAME_MAX];     /* as configured, else the login name */
        /* hex of SHA-256 over /etc/machine-id (and the machine name when
         * one is configured: two containers made from one image share
         * their machine-id, and a name tells them apart) */
        char machine_key[TEAM_KEY_HEX + 1];
        unsigned connect_timeout_s;   /* default 10 */
        unsigned query_timeout_s;     /* default 60: one batch, server side */
        bool private_file;            /* no group or other permission bits, ours */
        unsigned mode;                /* the file's permission bits */
        char error[TEAM_ERROR_MAX];   /* why the file cannot be used; "" = fine */
};

/* ${XDG_CONFIG_HOME:-~/.config}/agentmeterd/team.conf into buf. */
int team_conf_path(char *buf, size_t cap);

/* Parses a file's text into c (defaults first). A bad line sets c->error
 * ("line N: why") and the rest is still read. -ENOMEM only. */
int team_conf_parse(const char *text, size_t len, struct team_conf *c);

/* Reads path: -ENOENT when there is none (no team), -EFBIG, other -errno.
 * Sets the defaults (host name, login, machine key) and the file's
 * privacy; c->error says what is wrong with the contents. */
int team_conf_load(const char *path, struct team_conf *ret_conf);

/* The rule for passwords, like ssh's for keys: a url that holds one
 * (url_has_password, as libpq parses it) is refused unless the file is
 * private. NULL when fine, else the sentence to show. */
const char *team_conf_password_refusal(const struct team_conf *c, bool url_has_password,
                                       char *buf, size_t cap);

/* The machine key for a machine-id text and an optional name (NULL). */
void team_machine_key(const char *machine_id, const char *name, char ret_hex[TEAM_KEY_HEX + 1]);
