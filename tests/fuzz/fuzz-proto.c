/* libFuzzer target: a control-socket request line as a client sends it,
 * through framing, parsing, and report-query validation. */
#include <json-c/json.h>
#include <stddef.h>
#include <stdint.h>

#include "proto.h"
#include "report/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct json_object *req = NULL;
        const char *cmd = NULL, *err = NULL;

        if (proto_parse_request((const char *)data, size, &req, &cmd, &err) == 0 && req) {
                struct report_query q;
                const char *qerr = NULL;
                (void)report_query_from_json(req, &q, &qerr);
                json_object_put(req);
        }
        return 0;
}
