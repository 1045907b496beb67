/* Holds a ledger's LMDB writer lock until SIGTERM, so that the daemon's
 * next write waits (tests/system/team.t: a daemon killed between the team
 * server's commit and its own outbox commit). Prints "held" once it has
 * the lock. Usage: lmdb-hold LEDGER.mdb */
#include <lmdb.h>
#include <signal.h>
#include <stdio.h>

int main(int argc, char **argv)
{
        MDB_env *env;
        MDB_txn *txn;
        sigset_t set;
        int rc, sig;

        if (argc != 2) {
                fprintf(stderr, "usage: lmdb-hold LEDGER.mdb\n");
                return 2;
        }
        sigemptyset(&set);
        sigaddset(&set, SIGTERM);
        sigaddset(&set, SIGINT);
        sigprocmask(SIG_BLOCK, &set, NULL);
        rc = mdb_env_create(&env);
        if (rc == 0)
                rc = mdb_env_set_maxdbs(env, 16);
        if (rc == 0)
                rc = mdb_env_open(env, argv[1], MDB_NOSUBDIR, 0600);
        if (rc == 0)
                rc = mdb_txn_begin(env, NULL, 0, &txn); /* waits for the writer lock */
        if (rc) {
                fprintf(stderr, "lmdb-hold: %s: %s\n", argv[1], mdb_strerror(rc));
                return 1;
        }
        puts("held");
        fflush(stdout);
        sigwait(&set, &sig);
        mdb_txn_abort(txn);
        mdb_env_close(env);
        return 0;
}
