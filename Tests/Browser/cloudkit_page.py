#!/usr/bin/env python3
"""Apple's CloudKit JS in a real page (headless Chromium through Selenium) against ck serve, as a
web developer hooks it up: cloudkit.js and ck serve's /ck/cloudkit-config.js, one configure call.

    python3 Tests/Browser/cloudkit_page.py PATH/TO/ck PATH/TO/cloudkit.js

The page starts signed out: Apple's sign-in button opens ck serve's sign-in page as its popup,
where alice is picked. Then saveRecordZones, saveRecords (custom and default zone), performQuery
with zoneWide, fetchRecordZoneChanges, a zone subscription and registerForNotifications: a
record saved with the CLI must arrive as a notification, the page's own save must not. Last, a
binary asset (every byte 0–255) saved from a Blob, read back through its signed downloadURL.

Prints one JSON line per step {"step", "ok", "detail"} and exits 0 when every step passed, 1
when one failed, 77 when Chromium, chromedriver or Selenium is missing. Run by
Tests/EndToEndTests/BrowserTests.swift when a copy of cloudkit.js is there."""
import functools, http.server, json, os, shutil, socketserver, subprocess, sys, tempfile, threading, time

from browser_env import By, headless_chromium

CK, CLOUDKIT_JS = sys.argv[1], sys.argv[2]
CONTAINER = "iCloud.com.example.app"
data, pages = tempfile.mkdtemp(prefix="ck-page-"), tempfile.mkdtemp(prefix="ck-pages-")
failed = False


def ck(*args):
    out = subprocess.run([CK, "--data-dir", data, *args], capture_output=True, text=True, timeout=30)
    if out.returncode != 0:
        raise RuntimeError("ck %s: %s" % (" ".join(args), out.stderr))
    return json.loads(out.stdout) if out.stdout.strip() else None


def step(name, ok, detail):
    global failed
    failed = failed or not ok
    print(json.dumps({"step": name, "ok": bool(ok), "detail": detail}, sort_keys=True), flush=True)


PAGE = """<!doctype html><meta charset=utf-8>
<script src="cloudkit.js"></script>
<script src="%(server)s/ck/cloudkit-config.js"></script>
<div id="apple-sign-in-button"></div><div id="apple-sign-out-button"></div>
<script>
CloudKit.configure({ containers: [{ containerIdentifier: %(container)s, environment: "development",
  apiTokenAuth: { apiToken: %(token)s, persist: true } }] });
const container = CloudKit.getDefaultContainer();
const db = container.privateCloudDatabase;
window.steps = [];
window.notes = [];
const say = (step, ok, detail) => window.steps.push({ step, ok: !!ok, detail });
const zoneID = { zoneName: "PageZone" };
async function afterSignIn(user) {
  say("signed in", user && user.userRecordName, user && user.userRecordName);
  const z = await db.saveRecordZones([zoneID]);
  say("saveRecordZones", !z.hasErrors, z.zones.map(x => x.zoneID.zoneName));
  const s = await db.saveRecords([1, 2].map(n => ({ recordType: "PageItem", recordName: "p" + n, fields: { n: { value: n } } })), { zoneID });
  const d = await db.saveRecords([{ recordType: "PageItem", recordName: "p0", fields: { n: { value: 0 } } }]);
  say("saveRecords", !s.hasErrors && !d.hasErrors, s.records.concat(d.records).map(r => r.recordName));
  const q = await db.performQuery({ recordType: "PageItem", sortBy: [{ fieldName: "n", ascending: true }] }, { zoneWide: true });
  const names = q.records.map(r => r.recordName + "@" + (r.zoneID && r.zoneID.zoneName));
  say("performQuery zoneWide", names.join() === "p0@_defaultZone,p1@PageZone,p2@PageZone", names);
  const c = await db.fetchRecordZoneChanges([{ zoneID }]);
  const cz = c.zones[0];
  say("fetchRecordZoneChanges", !c.hasErrors && cz.records.length === 2 && cz.moreComing === false, cz.records.map(r => r.recordName));
  const sub = await db.saveSubscriptions([{ subscriptionType: "zone", subscriptionID: "page-zone", zoneID }]);
  say("saveSubscriptions", !sub.hasErrors, sub.subscriptions.map(x => x.subscriptionID));
  container.addNotificationListener(n => window.notes.push({ type: n.notificationType, sid: n.subscriptionID }));
  await container.registerForNotifications();
  say("registerForNotifications", container.isRegisteredForNotifications, null);
  window.listening = true;
}
async function ownSave() {
  const r = await db.saveRecords([{ recordType: "PageItem", recordName: "p3", fields: { n: { value: 3 } } }], { zoneID });
  say("own save", !r.hasErrors, r.records.map(x => x.recordName));
}
async function asset() {
  const bytes = new Uint8Array(256).map((_, i) => i);
  const r = await db.saveRecords([{ recordType: "PageDoc", recordName: "doc", fields: { file: { value: new Blob([bytes]) } } }], { zoneID });
  const v = r.records[0] && r.records[0].fields.file.value;
  const got = v && v.downloadURL ? new Uint8Array(await (await fetch(v.downloadURL)).arrayBuffer()) : null;
  say("asset upload and download", !r.hasErrors && got && got.length === 256 && got.every((b, i) => b === i),
      { downloadURL: v && v.downloadURL, size: got && got.length, first: got && Array.from(got.slice(0, 4)) });
  window.done = true;
}
container.setUpAuth().then(user => {
  say("setUpAuth signed out", user === null, user && user.userRecordName);
  return container.whenUserSignsIn().then(afterSignIn);
}).catch(e => { say("error", false, String(e && (e.ckErrorCode + " " + e.reason) || e)); window.done = true; });
</script>"""

server = driver = None
try:
    ck("account", "signin", "alice@example.com")
    token = ck("api-token", "create")["apiToken"]
    # The app's schema, as on CloudKit: a zone-wide query sorted by n needs n's indexes.
    schema = os.path.join(data, "app.ckdb")
    with open(schema, "w") as f:
        f.write('DEFINE SCHEMA\n    RECORD TYPE PageItem (\n        "___recordID" REFERENCE QUERYABLE,\n        n INT64 QUERYABLE SORTABLE\n    );\n')
    ck("schema", "import", schema)
    server = subprocess.Popen([CK, "--data-dir", data, "serve", "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    url = json.loads(server.stdout.readline())["url"]
    shutil.copy(CLOUDKIT_JS, os.path.join(pages, "cloudkit.js"))
    with open(os.path.join(pages, "page.html"), "w") as f:
        f.write(PAGE % {"server": url, "container": json.dumps(CONTAINER), "token": json.dumps(token)})
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass
    site = socketserver.ThreadingTCPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=pages))
    threading.Thread(target=site.serve_forever, daemon=True).start()

    driver = headless_chromium()
    driver.get("http://localhost:%d/page.html" % site.server_address[1])
    main = driver.current_window_handle

    def wait(cond, seconds):
        deadline = time.time() + seconds
        while time.time() < deadline:
            value = cond()
            if value:
                return value
            time.sleep(0.1)
        return None

    # Apple's button, drawn by CloudKit JS once setUpAuth found nobody signed in.
    button = wait(lambda: driver.find_elements(By.CSS_SELECTOR, "#apple-sign-in-button *"), 15)
    step("sign-in button", button, None)
    if button:
        button[0].click()
        popup = wait(lambda: [h for h in driver.window_handles if h != main], 10)
        if popup:
            driver.switch_to.window(popup[0])
            pick = wait(lambda: driver.find_elements(By.CSS_SELECTOR, "input[value='alice@example.com']"), 10)
            pick[0].click()
            driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
            wait(lambda: popup[0] not in driver.window_handles, 5)
            if popup[0] in driver.window_handles:
                driver.close()
        driver.switch_to.window(main)
        step("sign-in popup", popup, None)
        if wait(lambda: driver.execute_script("return window.listening || window.done || null"), 30):
            # A change from elsewhere reaches the page; the page's own does not come back.
            ck("--zone", "PageZone", "record", "save", "--type", "PageItem", "--name", "from-cli", "n=9")
            got = wait(lambda: driver.execute_script("return window.notes.length ? window.notes : null"), 20)
            step("notification of a CLI change", got and got[0]["sid"] == "page-zone", got)
            driver.execute_script("window.notes = []; ownSave()")
            time.sleep(3)
            step("no notification of the page's own save", driver.execute_script("return window.notes") == [], driver.execute_script("return window.notes"))
            driver.execute_script("asset()")
        wait(lambda: driver.execute_script("return window.done || null"), 30)
    for s in driver.execute_script("return window.steps || []"):
        step(s["step"], s["ok"], s["detail"])
    if not driver.execute_script("return window.done || null"):
        step("page finished", False, driver.get_log("browser")[-5:])
finally:
    if driver:
        driver.quit()
    if server:
        server.terminate()
        server.wait(10)
    shutil.rmtree(data, ignore_errors=True)
    shutil.rmtree(pages, ignore_errors=True)
sys.exit(1 if failed else 0)
