/* Where agentmeterd keeps things, from the XDG and systemd environment:
 * ledger in $STATE_DIRECTORY or ${XDG_STATE_HOME:-~/.local/state}/agentmeterd,
 * socket in $RUNTIME_DIRECTORY or $XDG_RUNTIME_DIR/agentmeterd, config in
 * ${XDG_CONFIG_HOME:-~/.config}. */
#pragma once

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
int paths_join(char *buf, size_t cap, const char *a, const char *b);
