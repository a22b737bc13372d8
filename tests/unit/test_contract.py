"""The worker's record protocol (lib/src/guarded_consumer/contract.py) is the only spelling of its line
tags, decisions, write outcomes, failure classes, metrics and outcome words: no room spells them by
hand, the saved queries find the lines the worker prints, `ops` reads those lines back as the
outcomes they are, and the view's words are the contract's."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from botocore.exceptions import ClientError

from guarded_consumer import contract
from ops import observe, snapshot

ROOT = Path(__file__).resolve().parents[2]
CONTRACT_FILE = ROOT / "lib" / "src" / "guarded_consumer" / "contract.py"
TEMPLATE_SNAPSHOT = (
    ROOT
    / "tests"
    / "infra"
    / "__snapshots__"
    / "test_snapshot_nag_lint"
    / "test_template_matches_snapshot.json"
)
APP_JS = ROOT / "ops" / "view" / "static" / "app.js"
TABLE = "orders"


def protocol_values() -> set[str]:
    """Every value the contract names: tags, decisions, write outcomes, failure classes, metrics,
    the outcomes and their words."""
    found: set[str] = set()
    for enum in (
        contract.Tag,
        contract.Decision,
        contract.WriteOutcome,
        contract.Failure,
        contract.Metric,
        contract.Delivery,
    ):
        found |= {member.value for member in enum}
    return found | {outcome.word for outcome in contract.Delivery}


# Text that spells a line's shape: a tag at a line's start, or a field as the worker prints it.
PATTERN_TEXT = re.compile(r"\^(JOB|WRITE|RESULT|ERROR)\b|\"(decision|error|duplicate)\": ")

# A value that means something else where it stands, by room: botocore's error response has an
# "Error" key; the benchmarks call a second delivery of an order "duplicate".
ELSEWHERE = {
    "Error": "the key of botocore's error response",
    "duplicate": "bench's label for a second delivery",
}


def product_files() -> Iterator[Path]:
    yield ROOT / "app.py"
    for room in ("lambda", "stacks", "ops", "local", "bench"):
        yield from (path for path in (ROOT / room).rglob("*.py") if path != CONTRACT_FILE)


def means_something_else(path: Path, node: ast.Constant, parent: ast.AST | None) -> bool:
    if node.value == "Error":
        getter = (
            isinstance(parent, ast.Call)
            and isinstance(parent.func, ast.Attribute)
            and parent.func.attr == "get"
        )
        indexed = (
            isinstance(parent, ast.Subscript)
            and isinstance(parent.value, ast.Attribute)
            and parent.value.attr == "response"
        )
        return getter or indexed
    return node.value == "duplicate" and path.is_relative_to(ROOT / "bench")


def spelled_by_hand(path: Path, root: Path = ROOT) -> list[str]:
    """`file:line 'text'` for each string constant in `path` that spells the protocol."""
    tree = ast.parse(path.read_text())
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    values = protocol_values()
    return [
        f"{path.relative_to(root)}:{node.lineno} {node.value!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and (node.value in values or PATTERN_TEXT.search(node.value))
        and not means_something_else(path, node, parents.get(node))
    ]


def test_no_room_spells_a_tag_decision_or_failure_class_by_hand():
    """Outside the contract (and the tests), no source file of the product, ops, the local driver
    or the benchmarks has a string that is a line tag, decision, write outcome, failure class,
    metric or outcome word, or a query pattern of the lines: renaming one in the contract renames
    it everywhere."""
    found = [hit for path in product_files() for hit in spelled_by_hand(path)]
    assert found == []


def test_the_scan_finds_a_hand_spelled_tag(tmp_path):
    """The scan above is not blind: a tag, a decision and a query pattern written by hand are found,
    a botocore "Error" key is not."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        'TAG = "WRITE"\nDECIDED = x == "written"\nQ = "@message like /^ERROR /"\n'
        'code = error.response.get("Error", {})\n'
    )
    hits = sorted(spelled_by_hand(sample, tmp_path))
    assert hits == ["sample.py:1 'WRITE'", "sample.py:2 'written'", "sample.py:3 '@message like /^ERROR /'"]


def test_the_worker_names_its_failures_as_the_contract_does(worker):
    """An ERROR line's `error` is the worker's exception class name: the contract's failure
    classes are those names."""
    assert worker.JobError.__name__ == contract.Failure.MALFORMED
    assert worker.ConflictingOrder.__name__ == contract.Failure.CONFLICT
    assert worker.OutOfTime.__name__ == contract.Failure.OUT_OF_TIME


def test_every_outcome_has_one_word_and_every_metric_one_outcome():
    """Each outcome reads as one distinct word, every metric counts one outcome, every decision
    and failure class comes to an outcome, and what the worker does not name is a failed write."""
    words = [outcome.word for outcome in contract.Delivery]
    assert len(set(words)) == len(words)
    assert contract.Delivery.WRITE_FAILED.word == "write failed"
    assert set(contract.METRIC_DELIVERIES) == set(contract.Metric)
    assert contract.DECISIONS == tuple(metric.value for metric in contract.Metric)
    assert [contract.delivery_of_decision(d) for d in contract.Decision] == [
        "accepted",
        "duplicate",
        "conflict",
    ]
    assert [contract.delivery_of_failure(f) for f in contract.Failure] == [
        "malformed",
        "conflict",
        "write_failed",
    ]
    assert contract.delivery_of_failure("AccessDeniedException") == contract.Delivery.WRITE_FAILED
    assert contract.delivery_of_decision(None) == contract.Delivery.WRITE_FAILED


def test_parse_line_reads_back_what_line_prints():
    """`parse_line` returns the tag and payload of a line made by `line`, and None for the other
    lines of a Lambda log (START, the metrics JSON, a tag without JSON, JSON that is not an object)."""
    payload = {"id": "o-1", "quantity": 2, "note": Decimal("1.5")}
    text = contract.line(contract.Tag.WRITE, payload)
    assert text == 'WRITE {"id": "o-1", "note": "1.5", "quantity": 2}'
    assert contract.parse_line(text) == (contract.Tag.WRITE, {"id": "o-1", "note": "1.5", "quantity": 2})
    for other in ("START RequestId: 1 Version: $LATEST", '{"_aws": {}}', "ERROR oops", "RESULT [1]", "WRITE"):
        assert contract.parse_line(other) is None


def test_ops_reads_items_as_the_worker_does(worker):
    """`ops` converts a stored item with the worker's own conversion: whole numbers as int, any
    other number as its decimal text (it once made floats)."""
    attributes = {"id": {"S": "o-1"}, "quantity": {"N": "4"}, "ratio": {"N": "0.1"}}
    assert observe.plain_item(attributes) == {"id": "o-1", "quantity": 4, "ratio": "0.1"}
    assert observe.plain_item(attributes) == worker.item_from_attributes(attributes)


class FakeDynamo:
    """PutItem with the worker's condition: stores the first item of an id, rejects the others
    with the stored item; ids in `denied` are refused as AccessDeniedException."""

    def __init__(self, denied: set[str]) -> None:
        self.items: dict[str, dict[str, Any]] = {}
        self.denied = denied

    def put_item(self, **request: Any) -> None:
        order_id = request["Item"]["id"]["S"]
        if order_id in self.denied:
            raise ClientError(
                {
                    "Error": {"Code": "AccessDeniedException", "Message": "not allowed"},
                    # only the status the worker reads; a real response's metadata has four more keys
                    "ResponseMetadata": {"HTTPStatusCode": 400},  # type: ignore[typeddict-item]
                },
                "PutItem",
            )
        if order_id in self.items:
            raise ClientError(
                {
                    "Error": {"Code": "ConditionalCheckFailedException", "Message": "failed"},
                    # botocore puts the stored item beside Error (ReturnValuesOnConditionCheckFailure);
                    # the stubs do not declare it
                    "Item": self.items[order_id],  # type: ignore[typeddict-unknown-key]
                },
                "PutItem",
            )
        self.items[order_id] = request["Item"]


def sqs_record(index: int, body: str) -> dict[str, Any]:
    return {"messageId": f"m-{index}", "body": body, "attributes": {"ApproximateReceiveCount": "1"}}


@pytest.fixture
def printed(worker: ModuleType, capsys: pytest.CaptureFixture[str]) -> list[str]:
    """What the worker prints for: a new order, its duplicate, a conflict, a malformed body and a
    write refused by DynamoDB, in that order."""
    bodies = [
        {"id": "order-a", "quantity": 2},
        {"id": "order-a", "quantity": 2},
        {"id": "order-a", "quantity": 3},
        "not json",
        {"id": "order-denied", "quantity": 1},
    ]
    records = [
        sqs_record(index, body if isinstance(body, str) else json.dumps(body))
        for index, body in enumerate(bodies)
    ]
    capsys.readouterr()
    worker.handle_event({"Records": records}, FakeDynamo({"order-denied"}), TABLE)
    return capsys.readouterr().out.splitlines()


def test_ops_reads_the_worker_lines_as_the_outcomes_they_are(printed):
    """The lines the worker prints, read by `ops` (observe, then snapshot.deliveries), come to the
    outcomes they are: renaming a tag, decision or failure class in the worker alone would break
    this."""
    events = [
        {"timestamp": index, "logStreamName": "s", "message": text} for index, text in enumerate(printed)
    ]
    records = [record for event in events if (record := observe.parse_record(event)) is not None]
    outcomes = [delivery["outcome"] for delivery in snapshot.deliveries(records)]
    assert outcomes == ["accepted", "duplicate", "conflict", "malformed", "write_failed"]
    assert [snapshot.OUTCOME_WORDS[outcome] for outcome in outcomes][-1] == "write failed"


def saved_queries() -> dict[str, str]:
    """{query name after the prefix: query string}, from the template snapshot that
    tests/infra/test_snapshot_nag_lint.py holds the synthesized stack to."""
    template = json.loads(TEMPLATE_SNAPSHOT.read_text())
    return {
        resource["Properties"]["Name"].split("/", 1)[1]: resource["Properties"]["QueryString"]
        for resource in template["Resources"].values()
        if resource["Type"] == "AWS::Logs::QueryDefinition"
    }


def filter_regex(query: str) -> re.Pattern[str]:
    """The query's `filter @message like /.../` as a Python regex (the patterns use no syntax in
    which Logs Insights and Python differ)."""
    match = re.search(r"filter @message like /(.*)/$", query, re.MULTILINE)
    assert match, query
    return re.compile(match.group(1))


def parse_glob(query: str) -> re.Pattern[str]:
    """The query's `parse @message '...*...' as name` as a regex capturing the `*`."""
    match = re.search(r"parse @message '(.*)' as \w+", query)
    assert match, query
    return re.compile("(.*?)".join(re.escape(part) for part in match.group(1).split("*", 1)))


def test_saved_queries_find_the_lines_the_worker_prints(printed):
    """Applied to what the worker prints, the saved conflicts query finds exactly the conflict's
    WRITE line, errors-by-class exactly the ERROR lines and their classes, and the one-order query
    (its ORDER-ID filled in) that order's WRITE, RESULT and ERROR lines (its failures too) and no
    other order's."""
    queries = saved_queries()
    assert set(queries) == {"conflicts", "errors-by-class", "decisions-for-one-order"}
    parsed = [contract.parse_line(text) for text in printed]
    lines = [(text, found) for text, found in zip(printed, parsed) if found is not None]

    conflicts = [found for text, found in lines if filter_regex(queries["conflicts"]).search(text)]
    assert [data["decision"] for _, data in conflicts] == [contract.Decision.CONFLICT]

    errors_query = queries["errors-by-class"]
    errors = [text for text, _ in lines if filter_regex(errors_query).search(text)]
    assert errors == [text for text, (tag, _) in lines if tag == contract.Tag.ERROR]
    matches = [parse_glob(errors_query).search(text) for text in errors]
    classes = [match.group(1) for match in matches if match]
    assert len(classes) == len(errors)
    assert classes == [contract.Failure.CONFLICT, contract.Failure.MALFORMED, "AccessDeniedException"]

    one_order = queries["decisions-for-one-order"].replace("ORDER-ID", "order-a")
    found = [found for text, found in lines if filter_regex(one_order).search(text)]
    write, result, error = contract.Tag.WRITE, contract.Tag.RESULT, contract.Tag.ERROR
    assert [tag for tag, _ in found] == [write, result, write, result, write, error]
    assert {payload["id"] for _, payload in found} == {"order-a"}


def js_labels(source: str, name: str) -> dict[str, str]:
    """{key: first element} of a script's `const name = { key: ["label", ...], ... };`, in order."""
    body = re.search(rf"const {name} = \{{\n(.*?)\n\}};", source, re.DOTALL)
    assert body, name
    return dict(re.findall(r'^\s+(\w+): \["([^"]+)",', body.group(1), re.MULTILINE))


def test_the_view_speaks_the_contracts_words():
    """The page's OUTCOMES are the contract's outcomes, labelled with their words; its summary rows
    and decision chart name each outcome by its word and each metric by the outcome it counts.
    (The script cannot import Python, so this holds the two together.)"""
    source = APP_JS.read_text()
    labels = js_labels(source, "OUTCOMES")
    assert list(labels) == [outcome.value for outcome in contract.Delivery]
    assert {key: label.lower() for key, label in labels.items()} == {
        o.value: o.word for o in contract.Delivery
    }
    rows = re.findall(r'\["([a-z ]+)", s\.(\w+), OUTCOMES\.(\w+)\[1\]', source)
    assert sorted(key for _, key, _ in rows) == sorted(contract.Delivery)
    assert all(label == contract.Delivery(key).word and key == meaning for label, key, meaning in rows)
    series = re.findall(r'\["(\w+)", "[^"]+", "#[0-9a-f]+", "(\w+)"\]', source)
    assert dict(series) == {
        metric.value: outcome.value for metric, outcome in contract.METRIC_DELIVERIES.items()
    }
