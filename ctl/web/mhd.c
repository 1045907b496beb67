/* dlopen of libmicrohttpd.so.12 (mhd.h). */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "web/mhd.h"

static struct mhd_api api;
static void *handle;

#define SYM(field, name)                                              \
        do {                                                          \
                *(void **)&api.field = dlsym(handle, #name);          \
                if (!api.field) {                                     \
                        missing = #name;                              \
                        goto fail;                                    \
                }                                                     \
        } while (0)

const struct mhd_api *mhd_api(char *err, size_t cap)
{
        const char *missing = NULL;

        if (handle)
                return &api;
        handle = dlopen("libmicrohttpd.so.12", RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
                snprintf(err, cap, "cannot load libmicrohttpd (Debian: apt install libmicrohttpd12): %s",
                         dlerror());
                return NULL;
        }
        SYM(start_daemon, MHD_start_daemon);
        SYM(stop_daemon, MHD_stop_daemon);
        SYM(create_response_from_buffer, MHD_create_response_from_buffer);
        SYM(create_response_from_callback, MHD_create_response_from_callback);
        SYM(add_response_header, MHD_add_response_header);
        SYM(queue_response, MHD_queue_response);
        SYM(destroy_response, MHD_destroy_response);
        SYM(lookup_connection_value, MHD_lookup_connection_value);
        return &api;
fail:
        snprintf(err, cap, "libmicrohttpd lacks %s", missing);
        dlclose(handle);
        handle = NULL;
        memset(&api, 0, sizeof(api));
        return NULL;
}
