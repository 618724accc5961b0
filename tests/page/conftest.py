"""The browser tests' fixtures (tests/page/browser.py has their `Walk`): the scripted provider's
file, `sdd page` in its own process, and headless Chromium. Selenium is imported only by a test
that asks for the browser; a module with a `browser` fixture of its own keeps its own."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest


@pytest.fixture
def replies(tmp_path: Path) -> Path:
    """The scripted provider's file; each step copies the demo's recorded replies into it."""
    return tmp_path / "replies.yaml"


@pytest.fixture
def page_url(tmp_path: Path, replies: Path) -> Iterator[str]:
    """`sdd page --folder DIR --no-browser` in its own process, stopped by its pid at the end."""
    env = {**os.environ, "SDD_PROVIDER": f"script:{replies}", "PYTHONUNBUFFERED": "1"}
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "sdd_git",
            "page",
            "--folder",
            str(tmp_path / "expenses"),
            "--no-browser",
        ],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), server.stderr.read() if server.stderr else url
        yield url
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


@pytest.fixture
def browser(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Headless Chromium from the system packages, driven by Selenium."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    from tests.page.browser import CHROMEDRIVER, CHROMIUM

    monkeypatch.setenv("SE_OFFLINE", "true")  # Selenium Manager never downloads a browser
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1000,1400",
        "--no-first-run",
        "--disable-extensions",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()
