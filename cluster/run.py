"""``make cluster``: the multi-replica topology on this machine until Ctrl-C (or SIGTERM).

Prints, as JSON, where everything is: HAProxy's address (point clients there: ``sapsam-play
--server ADDRESS``, ``sapsam tournament bot --server ADDRESS``), each replica's gRPC address,
metrics and ``/ready``, the primary's and the standby's URLs, the operator token's file. On
Ctrl-C every process it started is stopped and its folder removed (``--keep`` keeps the folder:
logs, HAProxy's configuration, the ledger of a test). cluster/topology.py says what runs.
"""

from __future__ import annotations

import argparse
import signal
import threading
import time
from pathlib import Path

from cluster.topology import REPLICAS, Cluster, new_folder, print_json


def main(argv: list[str] | None = None) -> int:
    """Start the cluster, wait for a signal, stop it."""
    parser = argparse.ArgumentParser(prog="python -m cluster.run", description=__doc__)
    parser.add_argument("--replicas", type=int, default=REPLICAS, help="sapsam serve processes")
    parser.add_argument("--folder", type=Path, help="where (default: a new temporary folder)")
    parser.add_argument("--keep", action="store_true", help="keep the folder afterwards")
    arguments = parser.parse_args(argv)
    if arguments.replicas < 1:
        parser.error("--replicas must be at least 1")
    stopping = threading.Event()
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, lambda *_: stopping.set())
    folder = arguments.folder or new_folder()
    began = time.monotonic()
    with Cluster(folder, replicas=arguments.replicas, keep=arguments.keep) as cluster:
        print_json({**cluster.describe(), "started_in_s": round(time.monotonic() - began, 1)})
        print("serving; Ctrl-C stops everything", flush=True)
        while not stopping.wait(1.0):
            gone = [node.name for node in cluster.nodes if not node.alive()]
            if gone:
                print(f"exited: {', '.join(gone)} (logs in {folder})", flush=True)
                break
        print("stopping", flush=True)
    print("stopped" + (f"; kept {folder}" if arguments.keep else ""), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
