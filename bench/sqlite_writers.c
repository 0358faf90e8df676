// The yardstick of ck serve's commit figure (bench/serve.sh): WRITERS processes, each with its
// own connection to one database file (WAL, synchronous=FULL), each committing one-row INSERT
// transactions in a loop for SECONDS. Prints "commits seconds" on stdout.
// Build: cc -O2 -o sqlite_writers sqlite_writers.c -lsqlite3
// Usage: sqlite_writers DB WRITERS SECONDS
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

static sqlite3 *open_db(const char *path) {
  sqlite3 *db;
  if (sqlite3_open(path, &db) != SQLITE_OK) { fprintf(stderr, "open %s: %s\n", path, sqlite3_errmsg(db)); exit(1); }
  // A writer waits for the write lock as an application would, with SQLite's own busy handler;
  // set first, as the journal_mode pragma itself may find the database locked.
  if (sqlite3_exec(db, "PRAGMA busy_timeout=10000; PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;", 0, 0, 0) != SQLITE_OK) {
    fprintf(stderr, "pragmas: %s\n", sqlite3_errmsg(db)); exit(1);
  }
  return db;
}

static void exec_or_die(sqlite3 *db, const char *sql) {
  char *err = 0;
  if (sqlite3_exec(db, sql, 0, 0, &err) != SQLITE_OK) { fprintf(stderr, "%s: %s\n", sql, err); exit(1); }
}

int main(int argc, char **argv) {
  if (argc != 4) { fprintf(stderr, "usage: %s DB WRITERS SECONDS\n", argv[0]); return 2; }
  const char *path = argv[1];
  int writers = atoi(argv[2]);
  double seconds = atof(argv[3]);
  sqlite3 *db = open_db(path);
  exec_or_die(db, "CREATE TABLE IF NOT EXISTS records (name TEXT PRIMARY KEY, record TEXT)");
  sqlite3_close(db);

  int fds[2];
  if (pipe(fds) != 0) { perror("pipe"); return 1; }
  double start = now(), deadline = start + seconds;
  for (int w = 0; w < writers; w++) {
    if (fork() == 0) {
      close(fds[0]);
      sqlite3 *db = open_db(path);
      sqlite3_stmt *insert;
      sqlite3_prepare_v2(db, "INSERT INTO records VALUES (?, ?)", -1, &insert, 0);
      long commits = 0;
      char name[64];
      while (now() < deadline) {
        snprintf(name, sizeof name, "w%d-%ld", w, commits);
        exec_or_die(db, "BEGIN IMMEDIATE");
        sqlite3_bind_text(insert, 1, name, -1, SQLITE_STATIC);
        sqlite3_bind_text(insert, 2, "{\"recordType\":\"Item\",\"fields\":{\"n\":{\"value\":1}}}", -1, SQLITE_STATIC);
        if (sqlite3_step(insert) != SQLITE_DONE) { fprintf(stderr, "insert: %s\n", sqlite3_errmsg(db)); exit(1); }
        sqlite3_reset(insert);
        exec_or_die(db, "COMMIT");
        commits++;
      }
      sqlite3_finalize(insert);
      sqlite3_close(db);
      if (write(fds[1], &commits, sizeof commits) != sizeof commits) _exit(1);
      _exit(0);
    }
  }
  close(fds[1]);
  long total = 0, n;
  int got = 0;
  while (read(fds[0], &n, sizeof n) == sizeof n) { total += n; got++; }
  int status, failed = 0;
  while (wait(&status) > 0) if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failed = 1;
  if (failed || got != writers) { fprintf(stderr, "a writer failed\n"); return 1; }
  printf("%ld %.3f\n", total, now() - start);
  return 0;
}
