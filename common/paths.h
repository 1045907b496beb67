/* Where agentmeterd keeps things, from the XDG and systemd environment:
 * ledger in $STATE_DIRECTORY or ${XDG_STATE_HOME:-~/.local/state}/agentmeterd,
 * socket in $RUNTIME_DIRECTORY or $XDG_RUNTIME_DIR/agentmeterd, config in
 * ${XDG_CONFIG_HOME:-~/.config}. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#define PATHS_SOCKET_NAME "control.sock"

/* Each writes an absolute path into buf; -ENAMETOOLONG, -ENOENT (no HOME). */
int paths_state_dir(char *buf, size_t cap);
int paths_runtime_dir(char *buf, size_t cap);
int paths_socket(char *buf, size_t cap);
int paths_config_home(char *buf, size_t cap);  /* ${XDG_CONFIG_HOME:-~/.config} */
int paths_home(char *buf, size_t cap);

/* mkdir -p with mode for the missing components. */
int paths_mkdir_p(const char *path, unsigned mode);

/* Joins a and b with one '/'; -ENAMETOOLONG. */
/* Creates the directory of a socket path (mode 0700) and checks that it is
 * a directory of ours that nobody else can enter (the /tmp fallback without
 * XDG_RUNTIME_DIR could be pre-created by another user): 0, -EPERM when it
 * is not private and ours, or a negative errno from creating it. */
int paths_socket_dir_prepare(const char *socket_path);
/* The same check without creating anything (clients): 0 or -EPERM/-errno. */
int paths_socket_dir_check(const char *socket_path);

int paths_join(char *buf, size_t cap, const char *a, const char *b);

/* Whether path is dir itself or lies below it, component-wise ("/a/bc" is
 * not below "/a/b"; trailing slashes of dir do not matter; "/" holds every
 * absolute path): the one prefix rule for roots, scans and watches. With
 * ret_rel: the part of path after dir and its slash ("" for dir itself). */
bool paths_within(const char *path, const char *dir, const char **ret_rel);
