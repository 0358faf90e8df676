"""The console's first screen of a zone, timed (bench/console.sh): a fresh load of the zone's URL
until its table shows 50 rows, in headless Chromium. Arguments: ck serve's JSON line (a file),
the container, the zone, the record type, the number of timed runs. Prints the median in ms."""
import json, statistics, sys, time

from browser_env import headless_chromium, By

announcement, container, zone, record_type, runs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
a = json.load(open(announcement))
d = headless_chromium()
d.set_window_size(1280, 800)
d.get(a['console'])
url = '%s/console/#/zone/%s/development/private/%s?type=%s' % (a['url'], container, zone, record_type)
times = []
for i in range(runs + 1):
    d.get('about:blank')
    t0 = time.perf_counter()
    d.get(url)
    end = t0 + 30
    while len(d.find_elements(By.CSS_SELECTOR, 'table.records tbody tr')) < 50:
        if time.perf_counter() > end:
            sys.exit('the table never showed 50 rows: ' + d.find_element(By.ID, 'main').text[:300])
        time.sleep(0.002)
    if i:  # the first warms the browser's cache of the page's files
        times.append((time.perf_counter() - t0) * 1000)
d.quit()
print('%.1f' % statistics.median(times))
