"""The browser every browser test in this folder drives (one per test module)."""

from __future__ import annotations

import pytest

from tests.view.browser import CHROMIUM, CHROMIUM_ARGS


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} not found: `make setup` installs Debian's chromium (apt-get install chromium)"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
