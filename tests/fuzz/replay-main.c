/* Replays fuzz inputs without libFuzzer (make check, gcc builds): every
 * file named on the command line, or found under a directory named there,
 * is passed to LLVMFuzzerTestOneInput once; prints a TAP line per target
 * run. A crash or sanitizer report fails the run. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t replayed;

static int replay_file(const char *path)
{
        FILE *f = fopen(path, "rb");
        uint8_t *buf;
        long n;

        if (!f)
                return -errno;
        if (fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) < 0) {
                fclose(f);
                return -EIO;
        }
        buf = malloc((size_t)n + 1);
        if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
                free(buf);
                fclose(f);
                return -EIO;
        }
        fclose(f);
        LLVMFuzzerTestOneInput(buf, (size_t)n);
        free(buf);
        replayed++;
        return 0;
}

static int replay(const char *path)
{
        struct stat st;
        if (stat(path, &st) < 0)
                return -errno;
        if (!S_ISDIR(st.st_mode))
                return S_ISREG(st.st_mode) ? replay_file(path) : 0;
        DIR *d = opendir(path);
        if (!d)
                return -errno;
        struct dirent *e;
        int r = 0;
        while ((e = readdir(d)) && r >= 0) {
                char sub[4096];
                if (e->d_name[0] == '.')
                        continue;
                snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
                r = replay(sub);
        }
        closedir(d);
        return r;
}

int main(int argc, char **argv)
{
        for (int i = 1; i < argc; i++) {
                int r = replay(argv[i]);
                if (r < 0) {
                        fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(-r));
                        return 1;
                }
        }
        printf("replayed %zu inputs\n", replayed);
        return 0;
}
