"""ck serve's /ck/cloudkit-config.js in a real browser (headless Chromium through Selenium).

    python3 config_script.py SERVER_URL CONTAINER API_TOKEN WEB_AUTH_TOKEN USER_RECORD_NAME [CLOUDKIT_JS]

Pages are served from http://localhost:PORT (an origin ck serve allows by default) by a small
HTTP server of this script. Each page loads the config script from ck serve, configures
CloudKit, and leaves its findings in window.result; one JSON line per page on stdout:
{"page", "ok", "detail"}. Exit 0 when every page passed.

- before / after: a stand-in CloudKit object (no copy of Apple's cloudkit.js is needed),
  defined after or before the script loads; the configuration CloudKit receives must send
  Apple's URLs to ck serve (a users/caller through services.fetch answers the user), name ck
  serve as every database partition, and answer CloudKit JS's telemetry in the page.
- cloudkit.js: Apple's own library, when a copy is given: setUpAuth, saveRecords and
  fetchRecords against ck serve with nothing but the config script pointing it there.
"""
import functools
import http.server
import json
import os
import shutil
import sys
import tempfile
import threading

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait

server, container, api_token, session, user = sys.argv[1:6]
cloudkit_js = sys.argv[6] if len(sys.argv) > 6 else None

CHECK_STANDIN = """
function check(config) {
  const apple = "https://api.apple-cloudkit.com/database/1/%(c)s/development/public/users/caller?ckAPIToken=%(t)s&ckWebAuthToken=%(s)s";
  const partitions = config.containers.map(c => [c.publicDatabasePartition, c.privateDatabasePartition, c.sharedDatabasePartition]);
  return Promise.all([
    config.services.fetch(apple, { method: "GET" }).then(r => r.json()),
    config.services.fetch("https://feedbackws.apple-cloudkit.com/reportStats", { method: "POST", body: "{}" }).then(r => r.status),
  ]).then(([caller, telemetry]) => { window.result = { caller, telemetry, partitions, kept: config.containers[0].apiTokenAuth.apiToken }; },
          (e) => { window.result = { error: String(e) }; });
}
""" % {"c": container, "t": api_token, "s": session}

STANDIN = "window.CloudKit = { configure: function (config) { check(config); return config; } };"
CONFIGURE = "CloudKit.configure({ containers: [{ containerIdentifier: %s, environment: 'development', apiTokenAuth: { apiToken: %s } }] });" % (
    json.dumps(container), json.dumps(api_token))
CONFIG_TAG = '<script src="%s/ck/cloudkit-config.js"></script>' % server

PAGES = {
    "after": "<script>%s%s</script>%s<script>%s</script>" % (CHECK_STANDIN, STANDIN, CONFIG_TAG, CONFIGURE),
    "before": "%s<script>%s%s</script><script>%s</script>" % (CONFIG_TAG, CHECK_STANDIN, STANDIN, CONFIGURE),
}
if cloudkit_js:
    PAGES["cloudkit.js"] = """<script src="cloudkit.js"></script>%s
<script>
CloudKit.configure({ containers: [{ containerIdentifier: %s, environment: "development",
  apiTokenAuth: { apiToken: %s, persist: false, ckWebAuthToken: %s } }] });
const container = CloudKit.getDefaultContainer();
const db = container.privateCloudDatabase;
container.setUpAuth()
  .then(who => db.saveRecords([{ recordType: "BrowserItem", recordName: "from-browser", fields: { title: { value: "hello" } } }])
    .then(saved => db.fetchRecords(["from-browser"])
      .then(got => { window.result = { caller: who && who.userRecordName, saved: saved.records.map(r => r.recordName),
                                       fetched: got.records.map(r => r.fields.title.value) }; })))
  .catch(e => { window.result = { error: String(e && (e.ckErrorCode + " " + e.reason) || e) }; });
</script>""" % (CONFIG_TAG, json.dumps(container), json.dumps(api_token), json.dumps(session))


def expected(page, result):
    if "error" in result:
        return False
    if page == "cloudkit.js":
        return result == {"caller": user, "saved": ["from-browser"], "fetched": ["hello"]}
    return (result.get("caller", {}).get("userRecordName") == user and result.get("telemetry") == 200
            and result.get("partitions") == [[server, server, server]] and result.get("kept") == api_token)


root = tempfile.mkdtemp(prefix="ck-browser-")
for name, body in PAGES.items():
    with open(os.path.join(root, name + ".html"), "w") as f:
        f.write("<!doctype html><meta charset=utf-8><body>" + body)
if cloudkit_js:
    shutil.copy(cloudkit_js, os.path.join(root, "cloudkit.js"))
class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


pages = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=root))
threading.Thread(target=pages.serve_forever, daemon=True).start()

options = Options()
for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"):
    options.add_argument(arg)
options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"), options=options)
failed = False
try:
    for name in PAGES:
        driver.get("http://localhost:%d/%s.html" % (pages.server_address[1], name))
        try:
            result = WebDriverWait(driver, 20).until(lambda d: d.execute_script("return window.result || null"))
        except Exception as e:  # the page never finished: say what its console said
            result = {"error": "no result: %s; console: %s" % (e.__class__.__name__, driver.get_log("browser")[-5:])}
        ok = expected(name, result)
        failed = failed or not ok
        print(json.dumps({"page": name, "ok": ok, "detail": result}), flush=True)
finally:
    driver.quit()
    pages.shutdown()
    shutil.rmtree(root, ignore_errors=True)
sys.exit(1 if failed else 0)
