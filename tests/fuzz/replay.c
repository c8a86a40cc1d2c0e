/*
 * The fuzz_wire harness without libFuzzer: runs each input file (or every
 * file of each directory) given on the command line once, as libFuzzer
 * would. Any compiler builds it, so the seed corpus and saved crash inputs
 * replay in every build; a finding aborts.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    uint8_t *buf;
    long n;
    FILE *f = fopen(path, "rb");

    if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 ||
        fseek(f, 0, SEEK_SET) != 0) {
        perror(path);
        return -1;
    }
    buf = malloc(n ? (size_t)n : 1);
    if (buf == NULL || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        perror(path);
        return -1;
    }
    fclose(f);
    LLVMFuzzerTestOneInput(buf, (size_t)n);
    free(buf);
    return 1;
}

int main(int argc, char **argv)
{
    int i, n = 0, r;

    for (i = 1; i < argc; i++) {
        struct stat st;
        DIR *d;
        struct dirent *e;

        if (stat(argv[i], &st) != 0) {
            perror(argv[i]);
            return 1;
        }
        if (!S_ISDIR(st.st_mode)) {
            if ((r = run_file(argv[i])) < 0) {
                return 1;
            }
            n += r;
            continue;
        }
        d = opendir(argv[i]);
        while (d && (e = readdir(d)) != NULL) {
            char path[4096];

            if (e->d_name[0] == '.') {
                continue;
            }
            snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
            if ((r = run_file(path)) < 0) {
                return 1;
            }
            n += r;
        }
        if (d) {
            closedir(d);
        }
    }
    printf("replayed %d inputs\n", n);
    return n > 0 ? 0 : 1;
}
