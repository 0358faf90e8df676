# ck's remote figures (issue 37), sourced by bench/run.sh: `ONLY=remote`. Uses run.sh's CK,
# WORK, report, ratio, need, median, now_ns, ms, free_port, json_string and BENCH_PIDS.
# Knobs: REMOTE_N (records in the cloned and pushed zone, default 20000), REMOTE_BIG (records
# cloned for the memory figure, default 100000), REMOTE_RUNS (timed runs per median, default 3).
#
# 1. ck clone of a REMOTE_N-record custom zone from a ck serve on loopback, written to a new
#    data directory, against a loop of curl and jq fetching the same changes/zone pages.
# 2. ck push of REMOTE_N new records (100 batches of 200 for 20000), against curl posting the
#    same batches.
# 3. ck pull with nothing changed, a remote of 50 zones: requests made (target 1); and the
#    time of a pull with nothing changed of the REMOTE_N-record clone.
# 4. peak memory of cloning REMOTE_BIG records.

bench_remote() {
  need curl curl || return 0
  need jq jq || return 0
  local n=${REMOTE_N:-20000} big=${REMOTE_BIG:-100000} runs=${REMOTE_RUNS:-3}
  local srv=$WORK/remote-server port url token session i
  export CK_DATA_DIR=$srv
  "$CK" account signin alice@example.com >/dev/null
  "$CK" zone create Big >/dev/null
  todo_items "$n" | "$CK" --zone Big import >/dev/null
  token=$("$CK" api-token create | json_string apiToken)
  session=$("$CK" account web-auth-token --keep-signed-in | json_string ckWebAuthToken)
  port=$(free_port)
  "$CK" serve --port "$port" >/dev/null 2>&1 &
  BENCH_PIDS="$BENCH_PIDS $!"
  for ((i = 0; i < 100; i++)); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; sleep 0.05; done
  url=http://127.0.0.1:$port/database/1/iCloud.com.example.app/development
  local q="ckAPIToken=$token&ckWebAuthToken=$(urlencode "$session")"
  export CLOUDKIT_API_TOKEN=$token CLOUDKIT_WEB_AUTH_TOKEN=$session XDG_CONFIG_HOME=$WORK/remote-config
  unset CK_DATA_DIR

  # 1. clone against curl + jq paging.
  local t0 t1 clone curlloop
  clone=$(for ((i = 0; i < runs; i++)); do
    rm -rf "$WORK/clone"; t0=$(now_ns); "$CK" clone "$url" "$WORK/clone" >/dev/null; t1=$(now_ns); ms "$t0" "$t1"; echo
  done | median)
  curlloop=$(for ((i = 0; i < runs; i++)); do
    t0=$(now_ns)
    local tok="" more=true body
    while [ "$more" = true ]; do
      if [ -z "$tok" ]; then body='{"zones":[{"zoneID":{"zoneName":"Big"},"resultsLimit":200}]}'; else body="{\"zones\":[{\"zoneID\":{\"zoneName\":\"Big\"},\"resultsLimit\":200,\"syncToken\":\"$tok\"}]}"; fi
      curl -s -X POST -H 'Content-Type: text/plain' --data "$body" "$url/private/changes/zone?$q" > "$WORK/page.json"
      tok=$(jq -r '.zones[0].syncToken' "$WORK/page.json"); more=$(jq -r '.zones[0].moreComing' "$WORK/page.json")
    done
    t1=$(now_ns); ms "$t0" "$t1"; echo
  done | median)
  report "remote: ck clone of $n records from ck serve (median ms)" "$clone"
  report "remote: curl+jq paging loop over the same pages (median ms)" "$curlloop"
  report "remote: clone ratio ck/curl+jq (target <= 1.5)" "$(ratio "$clone" "$curlloop")"

  # 2. push of n new records against curl posting the same batches.
  local push curlpush batches=$((n / 200))
  push=$(for ((i = 0; i < runs; i++)); do
    rm -rf "$WORK/pusher"; export CK_DATA_DIR=$WORK/pusher/.ck
    "$CK" account signin alice@example.com >/dev/null
    "$CK" remote add origin "$url" >/dev/null
    "$CK" zone create "Push$i" >/dev/null
    todo_items "$n" "p$i" | "$CK" --zone "Push$i" import >/dev/null
    t0=$(now_ns); "$CK" push --zone "Push$i" >/dev/null; t1=$(now_ns); ms "$t0" "$t1"; echo
    unset CK_DATA_DIR
  done | median)
  curlpush=$(for ((i = 0; i < runs; i++)); do
    curl -s -X POST -H 'Content-Type: text/plain' --data "{\"operations\":[{\"operationType\":\"create\",\"zone\":{\"zoneID\":{\"zoneName\":\"Curl$i\"}}}]}" "$url/private/zones/modify?$q" >/dev/null
    todo_items "$n" "c$i" | jq -c '{operationType:"create",record:{recordName,recordType,fields}}' | split -l 200 - "$WORK/batch$i."
    for f in "$WORK"/batch$i.*; do jq -s "{operations:., zoneID:{zoneName:\"Curl$i\"}, atomic:true}" "$f" > "$f.json"; done
    t0=$(now_ns)
    for f in "$WORK"/batch$i.*.json; do curl -s -X POST -H 'Content-Type: text/plain' --data-binary "@$f" "$url/private/records/modify?$q" >/dev/null; done
    t1=$(now_ns); ms "$t0" "$t1"; echo
  done | median)
  report "remote: ck push of $n new records, $batches batches (median ms)" "$push"
  report "remote: curl posting the same $batches batches (median ms)" "$curlpush"
  report "remote: push ratio ck/curl (target <= 1.5)" "$(ratio "$push" "$curlpush")"

  # 3. pull with nothing changed on a remote of 50 zones.
  export CK_DATA_DIR=$srv
  for ((i = 0; i < 50; i++)); do "$CK" zone create "Z$i" >/dev/null; done
  unset CK_DATA_DIR
  rm -rf "$WORK/fifty"; "$CK" clone "$url" "$WORK/fifty" >/dev/null
  report "remote: requests of a pull with nothing changed, 50 zones (target 1)" \
    "$("$CK" --data-dir "$WORK/fifty/.ck" pull | jq '.fetched.requests')"
  # The first pull after a change reads each zone's tracking log once (and keeps its summary);
  # the next ones read the summaries only.
  "$CK" --data-dir "$WORK/clone/.ck" pull >/dev/null
  report "remote: ck pull with nothing changed, one zone of $n records (median ms)" \
    "$(for ((i = 0; i < runs; i++)); do t0=$(now_ns); "$CK" --data-dir "$WORK/clone/.ck" pull >/dev/null; t1=$(now_ns); ms "$t0" "$t1"; echo; done | median)"

  # 4. peak memory cloning big records.
  if command -v /usr/bin/time >/dev/null; then
    export CK_DATA_DIR=$srv
    "$CK" zone create Huge >/dev/null
    todo_items "$big" h | "$CK" --zone Huge import >/dev/null
    unset CK_DATA_DIR
    rm -rf "$WORK/huge"
    report "remote: clone of $big records, peak memory (MiB, target <= 64)" \
      "$(awk -v k="$(peak_kb "$CK" clone "$url" "$WORK/huge" --zone Huge)" 'BEGIN { printf "%.1f", k / 1024 }')"
  fi
  unset CLOUDKIT_API_TOKEN CLOUDKIT_WEB_AUTH_TOKEN XDG_CONFIG_HOME
}
