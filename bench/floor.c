/* The file-system floor of a bulk load in ck's layout (issue 13): one file per record, written
 * as a temporary file and renamed into one of 256 shard directories, then one syncfs — only
 * the file writes, no parsing beyond finding each record's name, no history, no checks.
 * `make bench` compiles it with cc and times it beside `ck import` of the same NDJSON.
 * Usage: floor NDJSON DIR */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static unsigned shard(const char *s, size_t n) {
    unsigned h = 2166136261u;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
    return (h ^ (h >> 8) ^ (h >> 16) ^ (h >> 24)) & 0xff;
}

int main(int argc, char **argv) {
    if (argc != 3) { fprintf(stderr, "usage: floor NDJSON DIR\n"); return 2; }
    FILE *in = fopen(argv[1], "r");
    if (!in) { perror(argv[1]); return 1; }
    mkdir(argv[2], 0700);
    int root = open(argv[2], O_RDONLY | O_DIRECTORY);
    if (root < 0) { perror(argv[2]); return 1; }
    int dirs[256];
    for (int i = 0; i < 256; i++) {
        char name[3];
        snprintf(name, sizeof name, "%02x", i);
        mkdirat(root, name, 0700);
        dirs[i] = openat(root, name, O_RDONLY | O_DIRECTORY);
        if (dirs[i] < 0) { perror(name); return 1; }
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    long n = 0;
    while ((len = getline(&line, &cap, in)) > 0) {
        char *k = strstr(line, "\"recordName\":\"");
        if (!k) continue;
        k += 14;
        char *e = strchr(k, '"');
        if (!e) continue;
        size_t kn = (size_t)(e - k);
        int d = dirs[shard(k, kn)];
        char tmp[64], final[600];
        snprintf(tmp, sizeof tmp, ".tmp-%ld", n++);
        snprintf(final, sizeof final, "%.*s.json", (int)(kn < 500 ? kn : 500), k);
        int f = openat(d, tmp, O_WRONLY | O_CREAT | O_EXCL, 0600);
        if (f < 0 || write(f, line, (size_t)len) != len || close(f) != 0 || renameat(d, tmp, d, final) != 0) {
            perror(final);
            return 1;
        }
    }
    syncfs(root);
    printf("%ld\n", n);
    return 0;
}
