# The console's figure (issue 39), sourced by bench/run.sh: `ONLY=console`. The first screen of
# the big zone (N records): from a fresh page load of the zone's URL to its table of 50 rows in
# headless Chromium, the browser's own work included (Tests/Browser/console_first_screen.py).
# Target: under 300 ms. Needs Debian's chromium, chromium-driver and python3-selenium.
bench_console() {
  if ! command -v chromium >/dev/null || ! command -v chromedriver >/dev/null || ! /usr/bin/python3 -c 'import selenium' 2>/dev/null; then
    echo "bench: chromium, chromium-driver or python3-selenium missing (apt-get install chromium chromium-driver python3-selenium); skipping console" >&2
    return 0
  fi
  seed
  "$CK" -q --zone Big schema index add ToDoItem ___recordID QUERYABLE >/dev/null 2>&1 || true
  local container line
  container=$("$CK" container show | sed -n 's/.*"containerIdentifier": *"\([^"]*\)".*/\1/p' | head -1)
  "$CK" serve --port 0 > "$WORK/console.json" 2> "$WORK/console.log" &
  BENCH_PIDS="$BENCH_PIDS $!"
  for _ in $(seq 100); do [ -s "$WORK/console.json" ] && break; sleep 0.1; done
  line=$(/usr/bin/python3 Tests/Browser/console_first_screen.py "$WORK/console.json" "$container" Big ToDoItem "$RUNS") || { echo "bench: the console's first screen failed: $line" >&2; return 0; }
  report "console: first screen of a $N-record zone (median ms, target < 300)" "$line"
}
