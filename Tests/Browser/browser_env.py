"""What the browser tests share: Selenium and Debian's Chromium, or exit 77 (the Swift test
that runs the script then skips), and a headless Chromium driver."""
import os, sys

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
except ImportError:
    sys.exit(77)
CHROMIUM, DRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
if not (os.access(CHROMIUM, os.X_OK) and os.access(DRIVER, os.X_OK)):
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
