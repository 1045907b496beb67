/* libmicrohttpd, loaded with dlopen when `agentmeterctl web` starts: every
 * other command (a status line starts many times a minute) stays free of it
 * and of the TLS libraries it links. The pointers keep libmicrohttpd's types. */
#pragma once

#include <stddef.h>
#include <sys/types.h>
#include <microhttpd.h>

struct mhd_api {
        __typeof__(MHD_start_daemon) *start_daemon;
        __typeof__(MHD_stop_daemon) *stop_daemon;
        __typeof__(MHD_create_response_from_buffer) *create_response_from_buffer;
        __typeof__(MHD_create_response_from_callback) *create_response_from_callback;
        __typeof__(MHD_add_response_header) *add_response_header;
        __typeof__(MHD_queue_response) *queue_response;
        __typeof__(MHD_destroy_response) *destroy_response;
        __typeof__(MHD_lookup_connection_value) *lookup_connection_value;
};

/* The loaded library, or NULL with the reason in err. */
const struct mhd_api *mhd_api(char *err, size_t cap);
