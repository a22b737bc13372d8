"""Terminal output made safe from data: control, format and separator characters become visible
escapes in `ops status`, `make demo`'s table and `local status`."""

from __future__ import annotations

from local.scenario import Check, format_checks
from ops.terminal import safe, safe_lines


def test_safe_escapes_controls_and_keeps_text():
    assert safe("dedup-order é 中 ok") == "dedup-order é 中 ok"
    assert safe("a\x1b[31mb\x07\x7f\x9b\t") == "a\\x1b[31mb\\x07\\x7f\\x9b\\x09"
    assert safe("left\u202eright\u200b\u2028") == "left\\u202eright\\u200b\\u2028"


def test_data_cannot_start_a_line_of_its_own():
    assert safe_lines(["id: x\r\nok  fake", "next"]) == "id: x\\x0d\\x0aok  fake\nnext"


def test_the_demo_table_escapes_what_came_from_the_stack():
    hostile = "x\x1b]0;title\x07"
    table = format_checks([Check("reference item", hostile, hostile)])
    assert "\x1b" not in table and "\x07" not in table
    assert "x\\x1b]0;title\\x07" in table
