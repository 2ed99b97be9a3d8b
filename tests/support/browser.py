"""A real headless browser for the dashboard's tests: Debian's Chromium and its driver,
installed by the test set-up itself when missing (apt-get, as root, as on CI), driven by
Selenium with the driver's path given (so Selenium never tries to download one)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

ARTIFACTS = Path(os.environ.get("LORE_TEST_ARTIFACTS") or Path(__file__).resolve().parents[2] / "test-artifacts")


def ensure_chromium() -> tuple[str, str]:
    browser, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if browser and driver:
        return browser, driver
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        raise RuntimeError("the dashboard tests need Debian's chromium and chromium-driver: "
                           "apt-get install -y chromium chromium-driver")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env, timeout=900, stdout=subprocess.DEVNULL)
    subprocess.run(["apt-get", "install", "-y", "-qq", "--no-install-recommends", "chromium", "chromium-driver"],
                   check=True, env=env, timeout=1800, stdout=subprocess.DEVNULL)
    browser, driver = shutil.which("chromium"), shutil.which("chromedriver")
    assert browser and driver, "apt-get installed chromium but it is not on PATH"
    return browser, driver


def chrome() -> webdriver.Chrome:
    browser, driver = ensure_chromium()
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,1100",
                "--no-first-run", "--disable-extensions", "--disable-background-networking"):
        options.add_argument(arg)
    return webdriver.Chrome(options=options, service=Service(executable_path=driver))


def submit(driver: webdriver.Chrome, css: str, timeout: float = 30) -> None:
    """Click a form's button and wait until the page it leads to has replaced this one."""
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.wait import WebDriverWait

    old = driver.find_element(By.TAG_NAME, "html")
    driver.find_element(By.CSS_SELECTOR, css).click()

    def replaced(_driver) -> bool:
        # Mid-swap, Chromium can answer a probe of the old node with a plain inspector
        # error instead of a stale reference; both say the old document is gone.
        try:
            old.is_enabled()
        except StaleElementReferenceException:
            return True
        except WebDriverException as exc:
            if "does not belong to the document" in str(exc):
                return True
            raise
        return False

    WebDriverWait(driver, timeout).until(replaced)


def screenshot(driver: webdriver.Chrome, name: str) -> Path:
    folder = ARTIFACTS / "dashboard"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    driver.save_screenshot(str(path))
    return path
