"""What the browser tests share: Debian's chromium launched by Playwright, screenshots, and the
check that a page fits its viewport."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(os.environ.get("VIEW_ARTIFACTS", Path(__file__).resolve().parents[1] / "artifacts"))


def screenshot(page: Any, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / name
    page.screenshot(path=str(path), full_page=True)
    print(f"screenshot: {path}")
    return path


# Every shown element inside the viewport's width, and none whose content is cut off by its own
# overflow (an ellipsis, a hidden overflow): what "fits" means for the page.
_LAYOUT_PROBLEMS = """() => {
  const width = document.documentElement.clientWidth;
  const name = (node) => node.tagName.toLowerCase() + (node.id ? "#" + node.id : "") +
    (node.dataset && node.dataset.testid ? `[${node.dataset.testid}]` : "") +
    (node.className && typeof node.className === "string" ? "." + node.className.trim().replace(/\\s+/g, ".") : "");
  const problems = [];
  for (const node of document.body.querySelectorAll("*")) {
    if (node.closest("[hidden]") || ["SCRIPT", "TITLE"].includes(node.tagName)) continue;
    const box = node.getBoundingClientRect();
    if (box.width === 0 && box.height === 0) continue;
    if (box.left < -0.5 || box.right > width + 0.5) problems.push(`${name(node)} spans ${box.left}..${box.right} of ${width}`);
    const style = getComputedStyle(node);
    if (style.overflowX !== "visible" && node.scrollWidth > node.clientWidth + 1) {
      problems.push(`${name(node)} cuts its content: ${node.scrollWidth} > ${node.clientWidth}`);
    }
  }
  return problems;
}"""


def layout_problems(page: Any) -> list[str]:
    problems: list[str] = page.evaluate(_LAYOUT_PROBLEMS)
    return problems


def scrolls_sideways(page: Any) -> bool:
    sideways: bool = page.evaluate(
        "document.documentElement.scrollWidth > document.documentElement.clientWidth"
    )
    return sideways


def resize(page: Any, width: int, height: int = 900) -> None:
    """A new viewport, and the page given until a deadline to lay itself out again (the charts
    redraw on the resize event); whether it then fits is for the caller to assert."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    page.set_viewport_size({"width": width, "height": height})
    try:
        page.wait_for_function(
            "document.documentElement.scrollWidth <= document.documentElement.clientWidth", timeout=5000
        )
    except PlaywrightTimeout:
        pass
