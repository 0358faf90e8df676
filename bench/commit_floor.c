/* The I/O floor of ck serve's group commit (issue 29): what the commit protocol alone costs on
 * this disk, with no HTTP, JSON or checks. A group of G creates (G = the clients writing at
 * once, at most 16 in the bench) is, as Store/ModifyRecords.swift commits it:
 *   - per record, its file written under a temporary name in one of 256 shard directories and
 *     renamed into place (not synced: the history holds every record whole);
 *   - the zone history: the entries appended, fsync; the index words, fsync; the commit bit,
 *     one byte, fdatasync;
 *   - the database history's entry for the zone: the same three syncs;
 *   - the applied cursor replaced (not synced).
 * One thread commits groups back to back for SECONDS; prints "creates groups seconds".
 * Usage: commit_floor DIR G SECONDS */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static void put(int fd, const char *buf, size_t n, off_t at) {
    if (pwrite(fd, buf, n, at) != (ssize_t)n) { perror("pwrite"); exit(1); }
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: commit_floor DIR G SECONDS\n"); return 2; }
    int g = atoi(argv[2]);
    double secs = atof(argv[3]);
    if (g < 1 || g > 64 || secs <= 0) { fprintf(stderr, "commit_floor: G in 1...64, SECONDS > 0\n"); return 2; }
    if (mkdir(argv[1], 0700) != 0 || chdir(argv[1]) != 0) { perror(argv[1]); return 1; }
    mkdir("records", 0700);
    int shards[256];
    for (int i = 0; i < 256; i++) {
        char name[16];
        snprintf(name, sizeof name, "records/%02x", i);
        mkdir(name, 0700);
        shards[i] = open(name, O_RDONLY | O_DIRECTORY);
        if (shards[i] < 0) { perror(name); return 1; }
    }
    int zlog = open("history.log", O_RDWR | O_CREAT, 0600), zidx = open("history.idx", O_RDWR | O_CREAT, 0600);
    int dlog = open("db-history.log", O_RDWR | O_CREAT, 0600), didx = open("db-history.idx", O_RDWR | O_CREAT, 0600);
    if (zlog < 0 || zidx < 0 || dlog < 0 || didx < 0) { perror("history"); return 1; }
    static char record[700], entries[64 * 640], words[64 * 8];
    memset(record, 'r', sizeof record);
    memset(entries, 'e', sizeof entries);
    memset(words, 0, sizeof words);
    off_t zl = 0, zi = 0, dl = 0, di = 0;
    long creates = 0, groups = 0;
    double t0 = now(), t;
    do {
        for (int i = 0; i < g; i++, creates++) {
            char tmp[32], name[32];
            int d = shards[creates & 0xff];
            snprintf(tmp, sizeof tmp, ".tmp-%ld", creates);
            snprintf(name, sizeof name, "r%ld.json", creates);
            int f = openat(d, tmp, O_WRONLY | O_CREAT | O_EXCL, 0600);
            if (f < 0 || write(f, record, sizeof record) != sizeof record) { perror("record"); return 1; }
            close(f);
            if (renameat(d, tmp, d, name) != 0) { perror("rename"); return 1; }
        }
        put(zlog, entries, 640 * g, zl); zl += 640 * g; fsync(zlog);
        put(zidx, words, 8 * g, zi); zi += 8 * g; fsync(zidx);
        put(zidx, "\x80", 1, zi - 8); fdatasync(zidx);
        put(dlog, entries, 120, dl); dl += 120; fsync(dlog);
        put(didx, words, 8, di); di += 8; fsync(didx);
        put(didx, "\x80", 1, di - 8); fdatasync(didx);
        int a = open(".applied", O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (a < 0 || write(a, entries, 110) != 110) { perror("applied"); return 1; }
        close(a);
        rename(".applied", "applied.json");
        groups++;
        t = now() - t0;
    } while (t < secs);
    printf("%ld %ld %.3f\n", creates, groups, t);
    return 0;
}
