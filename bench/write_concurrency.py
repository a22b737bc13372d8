"""How the embedded AWS's DynamoDB answers conditional PutItems as more are in flight at once:
`python -m bench.write_concurrency` (about 30 s; prints one line per concurrency).

Each thread writes new orders with the worker's own request (`attribute_not_exists(id)`,
`ReturnValuesOnConditionCheckFailure=ALL_OLD`) and admin keys, ten threads per client; the
emulator runs in a process of its own. Printed per concurrency: writes per second in total,
latency percentiles, and the emulator's CPU per write. This is the figure behind the row on
write throughput in docs/local-fidelity.md, and behind docs/benchmarks.md's account of why ten
writes at a time could not run locally.
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench.report import process_cpu_seconds
from bench.stats import percentile


def run(concurrencies: tuple[int, ...] = (1, 10, 30), writes_per_thread: int = 60) -> list[dict[str, Any]]:
    from local.session import LocalSession, free_port

    session = LocalSession(Path(tempfile.mkdtemp(prefix="bench-writes-")) / "aws")
    session.start_emulator(free_port())
    try:
        pid = session.require_state()["pid"]
        session.client("dynamodb").create_table(
            TableName="writes",
            KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )

        def client() -> Any:
            return session.new_client("dynamodb", retries={"total_max_attempts": 1}, max_pool_connections=10)

        return [_measure(threads, client, pid, writes_per_thread) for threads in concurrencies]
    finally:
        session.stop_emulator()


def _measure(threads: int, client: Any, pid: int, writes_per_thread: int) -> dict[str, Any]:
    """`threads` writers at once, ten to a client, each writing `writes_per_thread` new orders."""
    clients = [client() for _ in range(max(1, threads // 10))]
    latencies: list[float] = []
    lock = threading.Lock()

    def write(n: int) -> None:
        dynamodb = clients[n % len(clients)]
        for i in range(writes_per_thread):
            started = time.perf_counter()
            dynamodb.put_item(
                TableName="writes",
                Item={"id": {"S": f"{threads}-{n}-{i}"}, "quantity": {"N": "3"}},
                ConditionExpression="attribute_not_exists(id)",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
            with lock:
                latencies.append(time.perf_counter() - started)

    cpu, started = process_cpu_seconds(pid), time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(write, range(threads)))
    wall = time.perf_counter() - started

    def ms(fraction: float) -> float:
        return round(percentile(latencies, fraction) * 1000, 1)

    return {
        "in_flight": threads,
        "writes_per_second": round(len(latencies) / wall),
        "p50_ms": ms(0.5),
        "p99_ms": ms(0.99),
        "max_ms": round(max(latencies) * 1000),
        "emulator_cpu_ms_per_write": round((process_cpu_seconds(pid) - cpu) / len(latencies) * 1000, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.write_concurrency", description=__doc__)
    parser.add_argument("--in-flight", type=int, nargs="+", default=[1, 10, 30])
    args = parser.parse_args()
    for row in run(tuple(args.in_flight)):
        print(
            f"{row['in_flight']:>3} in flight: {row['writes_per_second']} writes/s, p50 {row['p50_ms']} ms, "
            f"p99 {row['p99_ms']} ms, max {row['max_ms']} ms, emulator CPU {row['emulator_cpu_ms_per_write']} ms/write"
        )


if __name__ == "__main__":
    main()
