#!/usr/bin/env python3
"""ck serve's sign-in popup in a real browser (headless Chromium, through Selenium): the session
goes to the allowed page that asked for it, and a page of another site that opens the sign-in
URL receives nothing, whatever origin its URL names.

    python3 Tests/Browser/signin_opener.py PATH/TO/ck

Prints one JSON line {"ok", "app", "foreign"} and exits 0 when every check holds, 1 when one
fails, 77 when Chromium, chromedriver or Selenium is missing. Run by
Tests/EndToEndTests/SignInBrowserTests.swift."""
import functools, http.server, json, os, shutil, socketserver, subprocess, sys, tempfile, threading, time

from browser_env import By, headless_chromium

CK = sys.argv[1]
CONTAINER = "iCloud.com.example.app"
data, pages = tempfile.mkdtemp(prefix="ck-browser-"), tempfile.mkdtemp(prefix="ck-pages-")


def ck(*args):
    out = subprocess.run([CK, "--data-dir", data, *args], capture_output=True, text=True, check=True, timeout=30)
    return json.loads(out.stdout)


def static_site():
    """A page server on a port of its own: one origin per call."""
    socketserver.TCPServer.allow_reuse_address = True
    httpd = socketserver.TCPServer(("127.0.0.1", 0), functools.partial(http.server.SimpleHTTPRequestHandler, directory=pages))
    httpd.RequestHandlerClass.log_message = lambda *a: None
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd.server_address[1]


LISTEN = """window.received = [];
window.addEventListener("message", e => window.received.push({origin: e.origin, data: e.data}));"""

server = driver = None
try:
    ck("account", "signin", "alice@example.com")
    token = ck("api-token", "create")["apiToken"]
    app = f"http://localhost:{static_site()}"
    foreign = f"http://127.0.0.1:{static_site()}"
    server = subprocess.Popen([CK, "--data-dir", data, "serve", "--port", "0", "--allow-origin", app],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    url = json.loads(server.stdout.readline())["url"]
    caller = f"{url}/database/1/{CONTAINER}/development/public/users/caller?ckAPIToken={token}"
    signin = f"{url}/signin/{CONTAINER}/development"
    # The app asks as CloudKit JS does, and opens the 421's redirectURL as its popup.
    with open(os.path.join(pages, "app.html"), "w") as f:
        f.write(f"<script>{LISTEN}\nasync function start() {{ const r = await fetch({json.dumps(caller)}); "
                "window.redirect = (await r.json()).redirectURL; window.open(window.redirect, 'signin'); }</script>")
    with open(os.path.join(pages, "foreign.html"), "w") as f:
        f.write(f"<script>{LISTEN}\nfunction start(u) {{ window.open(u, 'signin'); }}</script>")

    driver = headless_chromium()

    def sign_in_in_popup(main):
        """Picks alice in the popup and presses Sign In; the messages the opener received."""
        deadline = time.time() + 10
        while len(driver.window_handles) < 2 and time.time() < deadline:
            time.sleep(0.1)
        popup = [h for h in driver.window_handles if h != main][0]
        driver.switch_to.window(popup)
        while not driver.find_elements(By.CSS_SELECTOR, "input[value='alice@example.com']") and time.time() < deadline:
            time.sleep(0.1)
        driver.find_element(By.CSS_SELECTOR, "input[value='alice@example.com']").click()
        driver.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
        time.sleep(1.0)
        if popup in driver.window_handles:
            driver.close()
        driver.switch_to.window(main)
        time.sleep(0.3)
        return [{"origin": m["origin"], "keys": sorted(m["data"]) if isinstance(m["data"], dict) else []}
                for m in driver.execute_script("return window.received")]

    driver.get(f"{app}/app.html")
    main = driver.current_window_handle
    driver.execute_script("start()")
    got = sign_in_in_popup(main)
    results = {"app": {"redirectURL": driver.execute_script("return window.redirect"), "received": got}, "foreign": {}}
    enc = lambda o: o.replace(":", "%3A").replace("/", "%2F")
    for name, target in [("names the app", f"{signin}?origin={enc(app)}"), ("names itself", f"{signin}?origin={enc(foreign)}"), ("names none", signin)]:
        driver.get(f"{foreign}/foreign.html")
        main = driver.current_window_handle
        driver.execute_script("start(arguments[0])", target)
        results["foreign"][name] = sign_in_in_popup(main)
    ok = (results["app"]["received"] == [{"origin": url, "keys": ["ckSession"]}]
          and all(r == [] for r in results["foreign"].values()))
    print(json.dumps({"ok": ok, **results}, sort_keys=True))
    sys.exit(0 if ok else 1)
finally:
    if driver:
        driver.quit()
    if server:
        server.terminate()
        server.wait(10)
    shutil.rmtree(data, ignore_errors=True)
    shutil.rmtree(pages, ignore_errors=True)
