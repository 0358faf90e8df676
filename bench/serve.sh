# ck serve's figures (issue 29), sourced by bench/run.sh: `ONLY=serve`. Uses run.sh's CK, WORK,
# report, ratio and need, and BENCH_PIDS (processes its exit trap ends).
# Knobs: SERVE_SECONDS (each wrk run and the sqlite3 run, default 5), SERVE_THREADS (wrk
# threads, default 2). 16 connections, as the targets say.
#
# 1. records/lookup of one record, keep-alive, 16 connections: requests/s and p99 (wrk --latency),
#    against nginx answering the same request (the same POST, path and query) with the same
#    bytes from a static file, by turns (LOOKUP_ROUNDS pairs, default 3; the median ratio).
# 2. records/modify creating one new record a request, 16 connections, one zone: commits/s,
#    against 16 processes each committing one-row transactions to one SQLite file (WAL,
#    synchronous=FULL; bench/sqlite_writers.c, or the sqlite3 shell when it cannot be built),
#    run once just before and once just after ck, the ratio against their mean. Then every
#    acknowledged record checked in the store, and the same creates again under strace
#    (file-system calls per acknowledged create on the commit path — the threads that answer —
#    and in all, and syncs), and with the kernel's share of its
#    CPU time (and, with perf, where the samples fall).
# 3. ck serve's VmRSS and VmHWM after both.

SERVE_CONNECTIONS=16

# Percent-encodes $1 for a query string.
urlencode() {
  local s=$1 out="" c i
  for ((i = 0; i < ${#s}; i++)); do
    c=${s:i:1}
    case $c in [A-Za-z0-9._~-]) out+=$c ;; *) printf -v c '%%%02X' "'$c"; out+=$c ;; esac
  done
  printf '%s' "$out"
}

# The string value of "key" in the JSON on stdin (pretty or compact), first one only.
json_string() { sed -n "s/.*\"$1\" *: *\"\\([^\"]*\\)\".*/\\1/p" | head -1; }

# A loopback port nothing listens on (bash's /dev/tcp: a refused connection means free).
free_port() {
  local p i
  for ((i = 0; i < 50; i++)); do
    p=$((20000 + RANDOM % 40000))
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return 0; }
  done
  return 1
}

# wrk's requests/s and p99 in ms, from its output in $1.
wrk_rps() { sed -n 's/^Requests\/sec: *\([0-9.]*\).*/\1/p' "$1"; }
wrk_p99_ms() {
  awk '$1 == "99%" { v = $2; u = v; sub(/[0-9.]+/, "", u); sub(/[a-z]+$/, "", v)
        printf "%.2f", (u == "us") ? v / 1000 : (u == "s") ? v * 1000 : (u == "m") ? v * 60000 : v }' "$1"
}
# wrk counts answers other than 2xx/3xx and socket errors; any of them spoils a figure.
wrk_clean() { ! grep -qE '^ *(Non-2xx|Socket errors)' "$1"; }

# The lookup request for wrk: a fixed POST body, as CloudKit JS sends it (text/plain).
serve_lookup_lua() {
  cat <<EOF
wrk.method = "POST"
wrk.body = '$1'
wrk.headers["Content-Type"] = "text/plain"
EOF
}

# The modify request for wrk: each request creates a new record, named from the wrk thread's
# number and its own counter after a prefix ($1, one a run); any answer not 200, or carrying a
# serverErrorCode, is counted.
serve_modify_lua() {
  echo "local prefix = \"$1\""
  cat <<'EOF'
local threads, counter = {}, 1
function setup(thread)
  thread:set("id", counter); counter = counter + 1
  table.insert(threads, thread)
end
function init(args) n = 0; errors = 0; acked = 0 end
function request()
  n = n + 1
  return wrk.format("POST", nil, {["Content-Type"] = "text/plain"},
    string.format('{"operations":[{"operationType":"create","record":{"recordType":"Item","recordName":"%s-%d-%d","fields":{"n":{"value":1}}}}],"zoneID":{"zoneName":"Bench"}}', prefix, id, n))
end
function response(status, headers, body)
  if status ~= 200 or body:find("serverErrorCode", 1, true) then errors = errors + 1 else acked = acked + 1 end
end
function done(summary, latency, requests)
  local e, a = 0, 0
  for _, t in ipairs(threads) do e = e + t:get("errors"); a = a + t:get("acked") end
  io.write(string.format("modify errors: %d\n", e))
  io.write(string.format("modify acknowledged: %d\n", a))
end
EOF
}

# nginx as a foreground process with its own configuration, pid file and logs in $1, serving
# $1/www/lookup.json for every path on 127.0.0.1:$2. A POST to a static file is 405 in nginx;
# `error_page 405 =200 $uri` answers it with the file, so nginx gets the very request ck gets
# (same method, path, query and body) and sends the very bytes ck sent.
nginx_conf() {
  cat <<EOF
worker_processes auto;
daemon off;
pid $1/nginx.pid;
error_log $1/error.log;
events { worker_connections 256; }
http {
  access_log off;
  keepalive_requests 1000000;
  keepalive_timeout 60s;
  client_body_temp_path $1/body;
  proxy_temp_path $1/proxy;
  fastcgi_temp_path $1/fastcgi;
  uwsgi_temp_path $1/uwsgi;
  scgi_temp_path $1/scgi;
  server {
    listen 127.0.0.1:$2;
    root $1/www;
    default_type application/json;
    location / { rewrite ^ /lookup.json break; error_page 405 =200 \$uri; }
  }
}
EOF
}

# Waits up to 5 s for "$@" (a check command) to succeed.
wait_for() {
  local i
  for ((i = 0; i < 50; i++)); do "$@" && return 0; sleep 0.1; done
  return 1
}

stop_pid() {
  kill -TERM "$1" 2>/dev/null || return 0
  wait "$1" 2>/dev/null || true
}

# The sqlite3 yardstick: prints "commits seconds how".
sqlite_commits() {
  local dir=$1 secs=$2 writers=$SERVE_CONNECTIONS
  if command -v cc >/dev/null && cc -O2 -o "$dir/sqlite_writers" bench/sqlite_writers.c -lsqlite3 2>/dev/null; then
    echo "$("$dir/sqlite_writers" "$dir/writers.sqlite" "$writers" "$secs") C-program"
    return
  fi
  need sqlite3 sqlite3 || return 1
  echo "bench: bench/sqlite_writers.c could not be built (needs cc and libsqlite3-dev); using $writers sqlite3 shells" >&2
  # Each shell runs a fixed number of one-row transactions; the figure is rows over wall time.
  local per=$((secs * 40)) w i t0 t1 pids=()
  sqlite3 "$dir/writers.sqlite" 'PRAGMA journal_mode=WAL; CREATE TABLE records (name TEXT PRIMARY KEY, record TEXT);' >/dev/null
  for ((w = 0; w < writers; w++)); do
    {
      echo 'PRAGMA busy_timeout=10000; PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;'
      for ((i = 0; i < per; i++)); do
        echo "BEGIN IMMEDIATE; INSERT INTO records VALUES ('w$w-$i', '{\"recordType\":\"Item\",\"fields\":{\"n\":{\"value\":1}}}'); COMMIT;"
      done
    } > "$dir/writer$w.sql"
  done
  t0=$(now_ns)
  for ((w = 0; w < writers; w++)); do sqlite3 "$dir/writers.sqlite" < "$dir/writer$w.sql" >/dev/null & pids+=($!); done
  for w in "${pids[@]}"; do wait "$w"; done
  t1=$(now_ns)
  echo "$(sqlite3 "$dir/writers.sqlite" 'SELECT count(*) FROM records') $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }') sqlite3-shells"
}

# One run of the sqlite3 yardstick into a new database file: prints "commits/s how".
sqlite_rate() {
  local d=$1/sqlite-$3 out commits took how
  mkdir -p "$d"
  out=$(sqlite_commits "$d" "$2") || return 1
  read -r commits took how <<< "$out"
  [ -n "$how" ] || return 1
  echo "$(awk -v n="$commits" -v s="$took" 'BEGIN { printf "%.1f", n / s }') $how"
}

bench_serve() {
  local secs=${SERVE_SECONDS:-5} threads=${SERVE_THREADS:-2} c=$SERVE_CONNECTIONS
  command -v wrk >/dev/null || { echo "bench: wrk is missing (Debian: apt-get install wrk); skipping ck serve's figures" >&2; return 0; }
  command -v curl >/dev/null || { echo "bench: curl is missing (Debian: apt-get install curl); skipping ck serve's figures" >&2; return 0; }
  local dir=$WORK/serve data=$WORK/serve/data
  mkdir -p "$dir"
  # The caller: a signed-in user, an API token, a web auth token ("keep me signed in"), and a
  # zone holding the record to look up.
  CK_DATA_DIR=$data "$CK" account signin alice@example.com >/dev/null
  local api web container
  api=$(CK_DATA_DIR=$data "$CK" api-token create | json_string apiToken)
  container=$(CK_DATA_DIR=$data "$CK" api-token list | json_string containerIdentifier)
  web=$(CK_DATA_DIR=$data "$CK" account web-auth-token --keep-signed-in | json_string ckWebAuthToken)
  CK_DATA_DIR=$data "$CK" zone create Bench >/dev/null
  CK_DATA_DIR=$data "$CK" --zone Bench record save --type Item --name lookup-me n=1 title=bench >/dev/null
  [ -n "$api" ] && [ -n "$web" ] && [ -n "$container" ] || { echo "bench: serve set-up failed (tokens)" >&2; return 1; }

  CK_DATA_DIR=$data "$CK" serve --port 0 > "$dir/serve.out" 2> "$dir/serve.err" &
  local pid=$!
  BENCH_PIDS+=" $pid"
  wait_for grep -qs '"url"' "$dir/serve.out" || { echo "bench: ck serve did not start: $(cat "$dir/serve.err")" >&2; return 1; }
  local url query db
  url=$(json_string url < "$dir/serve.out")
  query="ckAPIToken=$api&ckWebAuthToken=$(urlencode "$web")"
  db="/database/1/$container/development/private/records"

  # A sample of each request first: 200 and no serverErrorCode, or no figure.
  local lookup_body='{"records":[{"recordName":"lookup-me"}],"zoneID":{"zoneName":"Bench"}}' status
  mkdir -p "$dir/nginx/www"
  status=$(curl -s -o "$dir/nginx/www/lookup.json" -w '%{http_code}' -H 'Content-Type: text/plain' --data-binary "$lookup_body" "$url$db/lookup?$query")
  if [ "$status" != 200 ] || grep -q serverErrorCode "$dir/nginx/www/lookup.json"; then
    echo "bench: sample records/lookup answered $status: $(cat "$dir/nginx/www/lookup.json")" >&2; stop_pid "$pid"; return 1
  fi
  local sample
  sample=$(curl -s -w '\n%{http_code}' -H 'Content-Type: text/plain' --data-binary \
    '{"operations":[{"operationType":"create","record":{"recordType":"Item","recordName":"sample","fields":{"n":{"value":1}}}}],"zoneID":{"zoneName":"Bench"}}' "$url$db/modify?$query")
  if [ "${sample##*$'\n'}" != 200 ] || grep -q serverErrorCode <<< "$sample"; then
    echo "bench: sample records/modify answered: $sample" >&2; stop_pid "$pid"; return 1
  fi

  # 1. Lookups, ck serve and nginx by turns (LOOKUP_ROUNDS pairs, the same wrk command but for
  # the address): on a shared machine one window can run a third faster than the next, so a
  # ratio of two single windows says more about the moment than about ck. Each pair's ratio
  # is taken, and their median reported with their range.
  serve_lookup_lua "$lookup_body" > "$dir/lookup.lua"
  local rounds=${LOOKUP_ROUNDS:-3} r ck_rps p99 ng_rps="" port="" npid="" ng=$dir/nginx ratios=() cks=() p99s=() ngs=()
  if command -v nginx >/dev/null || [ -x /usr/sbin/nginx ]; then
    local nginx
    nginx=$(command -v nginx || echo /usr/sbin/nginx)
    # Run as root, nginx's workers drop to nobody: they must be able to read the file.
    chmod 755 "$WORK" "$dir" "$ng" "$ng/www"; chmod 644 "$ng/www/lookup.json"
    port=$(free_port)
    nginx_conf "$ng" "$port" > "$ng/nginx.conf"
    "$nginx" -p "$ng" -c "$ng/nginx.conf" -e "$ng/error.log" &
    npid=$!
    BENCH_PIDS+=" $npid"
    if ! wait_for curl -sf -o /dev/null --data-binary "$lookup_body" "http://127.0.0.1:$port$db/lookup?$query" ||
       ! curl -s --data-binary "$lookup_body" "http://127.0.0.1:$port$db/lookup?$query" | cmp -s - "$ng/www/lookup.json"; then
      echo "bench: nginx did not serve the saved body on port $port; no lookup ratio: $(cat "$ng/error.log" 2>/dev/null)" >&2
      port=""
    fi
  else
    echo "bench: nginx is missing (Debian: apt-get install nginx-light); no lookup ratio" >&2
  fi
  for ((r = 0; r < rounds; r++)); do
    wrk -t "$threads" -c "$c" -d "${secs}s" --latency -s "$dir/lookup.lua" "$url$db/lookup?$query" > "$dir/wrk-lookup.txt"
    wrk_clean "$dir/wrk-lookup.txt" || { echo "bench: ck serve's lookups had errors:" >&2; cat "$dir/wrk-lookup.txt" >&2; stop_pid "$pid"; return 1; }
    cks+=("$(wrk_rps "$dir/wrk-lookup.txt")")
    p99s+=("$(wrk_p99_ms "$dir/wrk-lookup.txt")")
    [ -n "$port" ] || continue
    wrk -t "$threads" -c "$c" -d "${secs}s" --latency -s "$dir/lookup.lua" "http://127.0.0.1:$port$db/lookup?$query" > "$dir/wrk-nginx.txt"
    if ! wrk_clean "$dir/wrk-nginx.txt"; then
      echo "bench: nginx's answers had errors; no lookup ratio:" >&2; cat "$dir/wrk-nginx.txt" >&2; port=""; continue
    fi
    ngs+=("$(wrk_rps "$dir/wrk-nginx.txt")")
    ratios+=("$(ratio "${cks[r]}" "${ngs[r]}")")
  done
  [ -n "$npid" ] && stop_pid "$npid"
  ck_rps=$(printf '%s\n' "${cks[@]}" | median)
  p99=$(printf '%s\n' "${p99s[@]}" | median)
  report "serve: records/lookup, one record, $c connections (requests/s, median of $rounds)" "$ck_rps"
  report "serve: records/lookup p99 latency (ms, median of $rounds, target <= 10)" "$p99"
  if [ -n "$port" ] && [ "${#ratios[@]}" = "$rounds" ]; then
    ng_rps=$(printf '%s\n' "${ngs[@]}" | median)
    report "serve: nginx, the same body as a static file (requests/s, median of $rounds)" "$ng_rps"
    report "serve: lookup ratio ck serve/nginx, median of $rounds pairs (target >= 0.5)" \
      "$(printf '%s\n' "${ratios[@]}" | median) (pairs: $(printf '%s\n' "${ratios[@]}" | sort -g | paste -sd ' '))"
  fi

  # 2. One-record creates, one zone, between two runs of the sqlite3 yardstick (the disk's speed
  # swings from one minute to the next on a shared machine; the ratio uses their mean).
  local sq_before sq_after
  sq_before=$(sqlite_rate "$dir" "$secs" before) || true
  serve_modify_lua "bench$$x$RANDOM" > "$dir/modify.lua"
  wrk -t "$threads" -c "$c" -d "${secs}s" --latency -s "$dir/modify.lua" "$url$db/modify?$query" > "$dir/wrk-modify.txt"
  if ! wrk_clean "$dir/wrk-modify.txt" || ! grep -q '^modify errors: 0$' "$dir/wrk-modify.txt"; then
    echo "bench: ck serve's creates had errors:" >&2; cat "$dir/wrk-modify.txt" >&2; stop_pid "$pid"; return 1
  fi
  local ck_cps
  ck_cps=$(wrk_rps "$dir/wrk-modify.txt")
  report "serve: records/modify, one new record, $c connections (commits/s, p99 ms)" "$ck_cps, $(wrk_p99_ms "$dir/wrk-modify.txt")"
  sq_after=$(sqlite_rate "$dir" "$secs" after) || true
  local mean=""
  if [ -n "$sq_before" ] && [ -n "$sq_after" ]; then
    local how=${sq_before#* }
    mean=$(awk -v a="${sq_before%% *}" -v b="${sq_after%% *}" 'BEGIN { printf "%.1f", (a + b) / 2 }')
    report "serve: sqlite3, $c writers, one-row transactions, WAL, synchronous=FULL ($how), before / after ck (commits/s)" "${sq_before%% *} / ${sq_after%% *}"
    report "serve: commit ratio ck serve/sqlite3 (mean of the two) (target >= 1.0)" "$(ratio "$ck_cps" "$mean")"
  fi

  # Every acknowledged record is in the store: wrk's answers without an error are the creates
  # ck acknowledged; the zone must hold at least that many (a request in flight when wrk stopped
  # may have committed unanswered), besides lookup-me and sample.
  local acked held
  acked=$(sed -n 's/^modify acknowledged: \([0-9]*\)$/\1/p' "$dir/wrk-modify.txt")
  held=$(CK_DATA_DIR=$data "$CK" --zone Bench record list --format ndjson | grep -c '"recordName":"bench' || true)
  report "serve: acknowledged creates / bench records in the zone after the run (every one kept)" "$acked / $held"
  if [ -z "$acked" ] || [ "$held" -lt "$acked" ]; then
    echo "bench: ck serve acknowledged $acked creates and the zone holds $held of them" >&2; stop_pid "$pid"; return 1
  fi

  # Where the creates' time goes: the same run again, shorter, with strace counting the server's
  # system calls (it slows the server; the counts per acknowledged record are what to read), and
  # perf sampling where its CPU time is spent (user or kernel), where they are installed.
  if command -v strace >/dev/null; then
    serve_modify_lua "trace$$x$RANDOM" > "$dir/trace.lua"
    # Group commits in the traced run: the zone history's lines that end a commit.
    local zlog groups0 groups1
    zlog=$(find "$data" -path '*/zones/Bench/history.log' | head -1)
    groups0=$(grep -c '"commit":true' "$zlog" || true)
    # Every call traced (file-system calls, and the sockets' reads and writes that tell a
    # request's thread): the commit path is what the threads that answer requests do; the rest
    # (publishing the record files, index upkeep) is done after the answer, on other threads.
    local fscalls=openat,openat2,newfstatat,fstat,statx,lstat,stat,pread64,pwrite64,renameat,renameat2,rename,linkat,unlinkat,unlink,mkdirat,fsync,fdatasync,syncfs,ftruncate,fallocate,getdents64,flock,close
    strace -f -qq -o "$dir/strace.txt" -e trace="$fscalls,recvfrom,sendto" -p "$pid" 2>/dev/null & local spid=$!
    sleep 1
    wrk -t "$threads" -c "$c" -d 3s -s "$dir/trace.lua" "$url$db/modify?$query" > "$dir/wrk-trace.txt"
    kill -INT "$spid" 2>/dev/null; wait "$spid" 2>/dev/null || true
    groups1=$(grep -c '"commit":true' "$zlog" || true)
    local n
    n=$(sed -n 's/^modify acknowledged: \([0-9]*\)$/\1/p' "$dir/wrk-trace.txt")
    if [ -n "$n" ] && [ "$n" -gt 0 ] && [ -s "$dir/strace.txt" ]; then
      # Per call: how many on the commit path, how many after it (bench/out/serve-strace.txt).
      awk -v n="$n" '
        { sub(/<\.\.\. /, ""); tid = $1; call = $2; sub(/\(.*/, "", call); sub(/ resumed>.*/, "", call) }
        $0 ~ / resumed>/ || call !~ /^[a-z0-9_]+$/ { next }
        call == "recvfrom" || call == "sendto" { answering[tid] = 1; next }
        { count[tid, call]++; calls[call] = 1; tids[tid] = 1 }
        END {
          for (t in tids) for (c in calls) if ((t, c) in count) { if (t in answering) path[c] += count[t, c]; else after[c] += count[t, c] }
          printf "%-12s %14s %14s   (per acknowledged create, %d creates)\n", "call", "commit path", "after it", n
          for (c in calls) printf "%-12s %14.2f %14.2f\n", c, path[c] / n, after[c] / n
        }' "$dir/strace.txt" | { read -r head; echo "$head"; sort -k2,2nr; } > "$dir/strace-summary.txt"
      cp "$dir/strace-summary.txt" "$OUT/serve-strace.txt" 2>/dev/null || true
      local fs all syncs
      fs=$(awk 'NR > 1 { c += $2 } END { printf "%.1f", c }' "$dir/strace-summary.txt")
      all=$(awk 'NR > 1 { c += $2 + $3 } END { printf "%.1f", c }' "$dir/strace-summary.txt")
      syncs=$(awk '$1 ~ /^(fsync|fdatasync|syncfs)$/ { c += $2 + $3 } END { printf "%.2f", c }' "$dir/strace-summary.txt")
      report "serve: file-system system calls per acknowledged create on the commit path (target <= 4), in all" "$fs, $all ($n creates; bench/out/serve-strace.txt)"
      report "serve: syncs per acknowledged create" "$syncs"
      if [ $((groups1 - groups0)) -gt 0 ]; then
        report "serve: syncs per group commit (target 1), creates per group" "$(awk -v n="$n" -v g=$((groups1 - groups0)) -v s="$syncs" 'BEGIN { printf "%.2f, %.1f", s * n / g, n / g }')"
      fi
    fi
  fi
  # Kernel share from /proc (utime and stime, fields 14 and 15) over another 3 s of creates; with
  # perf, where those samples fall (by library, and the kernel's own functions).
  serve_modify_lua "cpu$$x$RANDOM" > "$dir/cpu.lua"
  local before after
  before=$(awk '{ print $14, $15 }' "/proc/$pid/stat" 2>/dev/null || true)
  if command -v perf >/dev/null; then perf record -q -g -o "$dir/perf.data" -p "$pid" -- sleep 3 >/dev/null 2>&1 & local ppid=$!; fi
  wrk -t "$threads" -c "$c" -d 3s -s "$dir/cpu.lua" "$url$db/modify?$query" > /dev/null
  after=$(awk '{ print $14, $15 }' "/proc/$pid/stat" 2>/dev/null || true)
  if [ -n "$before" ] && [ -n "$after" ]; then
    report "serve: ck serve's CPU time in the kernel during creates, /proc utime and stime (%)" \
      "$(awk -v b="$before" -v a="$after" 'BEGIN { split(b, x, " "); split(a, y, " "); u = y[1] - x[1]; s = y[2] - x[2]; printf "%.0f", (u + s) ? 100 * s / (u + s) : 0 }')"
  fi
  if [ -n "${ppid:-}" ]; then
    wait "$ppid" 2>/dev/null || true
    { perf report -i "$dir/perf.data" --stdio --sort dso --no-children -g none 2>/dev/null | grep -v '^#' | grep -v '^$' | head -8
      echo; perf report -i "$dir/perf.data" --stdio --sort sym --no-children -g none 2>/dev/null | grep -v '^#' | grep -v '^$' | head -25
    } > "$OUT/serve-perf.txt" || true
    [ -s "$OUT/serve-perf.txt" ] && report "serve: perf samples of the creates, by library and symbol" "bench/out/serve-perf.txt"
  fi

  # 3. Memory after both runs, then a clean stop.
  local rss hwm
  rss=$(awk '/^VmRSS:/ { printf "%.1f", $2 / 1024 }' "/proc/$pid/status" 2>/dev/null || true)
  hwm=$(awk '/^VmHWM:/ { printf "%.1f", $2 / 1024 }' "/proc/$pid/status" 2>/dev/null || true)
  [ -n "$rss" ] && report "serve: resident memory after the runs, VmRSS / VmHWM (MiB, target <= 64)" "$rss / $hwm"
  kill -TERM "$pid"
  local rc=0
  wait "$pid" || rc=$?
  [ "$rc" = 0 ] || echo "bench: ck serve exited $rc after SIGTERM" >&2
}
