/* agentmeterd's command line (options.h). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "options.h"
#include "registry.h"

static void usage(FILE *f)
{
        fprintf(f,
                "Usage: agentmeterd [OPTIONS]\n"
                "Meters what AI coding agents spend, into an LMDB ledger.\n\n"
                "  --once                     ingest every source once, print a summary, exit\n"
                "      --rebuild-rollups      recompute rollups and session sums from the rows, exit\n"
                "  -v, --verbose              log debug messages\n"
                "  -q, --quiet                log warnings and errors only\n"
                "      --log-target=auto|console|journal\n"
                "      --reconcile-interval=SECONDS  full re-check period (default 60)\n"
                "      --state-dir=DIR        ledger directory (default $STATE_DIRECTORY or\n"
                "                             ${XDG_STATE_HOME:-~/.local/state}/agentmeterd)\n"
                "      --socket=PATH          control socket (default $RUNTIME_DIRECTORY or\n"
                "                             $XDG_RUNTIME_DIR/agentmeterd, control.sock)\n"
                "      --read-threads=N       threads that read and parse a scan's files beside the\n"
                "                             main thread (default: one per CPU but one, none on\n"
                "                             one CPU; 0: none)\n"
                "      --list-variables       print every discovery variable and its harness\n"
                "      --metrics-file=PATH    Prometheus textfile to keep current (default\n"
                "                             $AGENTMETER_METRICS_FILE or STATE_DIR/metrics.prom)\n"
                "      --no-metrics-file      write no metrics file (`agentmeterctl metrics` works)\n"
                "      --metrics-user=NAME    the metrics' user label (default\n"
                "                             $AGENTMETER_METRICS_USER or login@hostname)\n"
                "      --version              print the version\n"
                "  -h, --help                 this help\n"
                "See agentmeterd(8).\n");
}

/* The discovery variables, as install records them: "NAME<TAB>harness"
 * ("*" for HOME, which every harness reads). */
static void list_variables(void)
{
        const char *const *vars = registry_env_vars();
        for (size_t i = 0; vars[i]; i++) {
                const char *owner = registry_env_owner(vars[i]);
                printf("%s\t%s\n", vars[i], owner ? owner : "*");
        }
}

int options_parse(int argc, char **argv, struct options *o)
{
        enum { OPT_ONCE = 256, OPT_REBUILD, OPT_TARGET, OPT_RECONCILE, OPT_STATE, OPT_SOCKET,
               OPT_VERSION, OPT_LIST_VARS, OPT_METRICS_FILE, OPT_NO_METRICS, OPT_METRICS_USER,
               OPT_READ_THREADS };
        static const struct option longopts[] = {
                { "once", no_argument, NULL, OPT_ONCE },
                { "rebuild-rollups", no_argument, NULL, OPT_REBUILD },
                { "verbose", no_argument, NULL, 'v' },
                { "quiet", no_argument, NULL, 'q' },
                { "log-target", required_argument, NULL, OPT_TARGET },
                { "reconcile-interval", required_argument, NULL, OPT_RECONCILE },
                { "state-dir", required_argument, NULL, OPT_STATE },
                { "socket", required_argument, NULL, OPT_SOCKET },
                { "version", no_argument, NULL, OPT_VERSION },
                { "list-variables", no_argument, NULL, OPT_LIST_VARS },
                { "metrics-file", required_argument, NULL, OPT_METRICS_FILE },
                { "no-metrics-file", no_argument, NULL, OPT_NO_METRICS },
                { "metrics-user", required_argument, NULL, OPT_METRICS_USER },
                { "read-threads", required_argument, NULL, OPT_READ_THREADS },
                { "help", no_argument, NULL, 'h' },
                { 0 },
        };
        int c;
        while ((c = getopt_long(argc, argv, "vqh", longopts, NULL)) >= 0) {
                switch (c) {
                case OPT_ONCE: o->once = true; break;
                case OPT_REBUILD: o->rebuild_rollups = true; break;
                case 'v': o->level = LOG_DEBUG; break;
                case 'q': o->level = LOG_WARNING; break;
                case OPT_TARGET:
                        if (log_target_parse(optarg, &o->target) < 0) {
                                fprintf(stderr, "agentmeterd: bad --log-target '%s'\n", optarg);
                                return 2;
                        }
                        break;
                case OPT_RECONCILE: {
                        char *end;
                        unsigned long v = strtoul(optarg, &end, 10);
                        if (*end || v == 0 || v > 86400) {
                                fprintf(stderr, "agentmeterd: bad --reconcile-interval '%s' (1..86400)\n", optarg);
                                return 2;
                        }
                        o->reconcile_sec = (unsigned)v;
                        break;
                }
                case OPT_READ_THREADS: {
                        char *end;
                        unsigned long v = strtoul(optarg, &end, 10);
                        if (*end || !*optarg || v > 64) {
                                fprintf(stderr, "agentmeterd: bad --read-threads '%s' (0..64)\n", optarg);
                                return 2;
                        }
                        o->read_threads = (int)v;
                        break;
                }
                case OPT_STATE: o->state_dir = optarg; break;
                case OPT_SOCKET: o->socket = optarg; break;
                case OPT_METRICS_FILE: o->metrics_file = optarg; break;
                case OPT_NO_METRICS: o->metrics_file = ""; break;
                case OPT_METRICS_USER: o->metrics_user = optarg; break;
                case OPT_VERSION: printf("agentmeterd %s\n", AM_VERSION); exit(0);
                case OPT_LIST_VARS: list_variables(); exit(0);
                case 'h': usage(stdout); exit(0);
                default: usage(stderr); return 2;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "agentmeterd: unexpected argument '%s'\n", argv[optind]);
                return 2;
        }
        return 0;
}

