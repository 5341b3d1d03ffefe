"""A probe for ``bench/service.py``: the thread CPU each server process spends signing receipts
and building their ``Receipt`` messages, measured in the run itself.

Put this folder first on ``PYTHONPATH`` and name an output folder in ``SAPSAM_RECEIPT_PROBE``;
every Python process started then imports this module (``site`` does), and a server process
writes ``<pid>.json`` there every 200 receipts: receipts signed, CPU seconds in
``ReceiptSigner.sign`` and in ``receipt_message`` (``time.thread_time`` around each call: the
worker's event loop runs them on its one thread), and the process's CPU so far::

    PYTHONPATH=bench/receipt_probe:$PYTHONPATH SAPSAM_RECEIPT_PROBE=/tmp/probe \\
        python bench/service.py

Without ``SAPSAM_RECEIPT_PROBE`` it does nothing.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Sequence
from typing import Any

_OUTPUT = os.environ.get("SAPSAM_RECEIPT_PROBE")

if _OUTPUT:
    import sapsam.api.receipt_messages as _messages
    import sapsam.app.receipts as _receipts
    from sapsam.log.records import RecordedEvent

    _state: dict[str, float] = {"receipts": 0, "sign_cpu": 0.0, "message_cpu": 0.0}
    _lock = threading.Lock()
    _sign = _receipts.ReceiptSigner.sign
    _message = _messages.receipt_message

    def _dump() -> None:
        state = {**_state, "process_cpu": time.process_time(), "pid": os.getpid()}
        with open(os.path.join(str(_OUTPUT), f"{os.getpid()}.json"), "w") as handle:
            json.dump(state, handle)

    def _timed_sign(
        self: _receipts.ReceiptSigner, events: Sequence[RecordedEvent]
    ) -> _receipts.IssuedReceipt | None:
        began = time.thread_time()
        try:
            return _sign(self, events)
        finally:
            spent = time.thread_time() - began
            with _lock:
                _state["receipts"] += 1
                _state["sign_cpu"] += spent
                if _state["receipts"] % 200 == 0:
                    _dump()

    def _timed_message(issued: _receipts.IssuedReceipt | None) -> Any:
        began = time.thread_time()
        try:
            return _message(issued)
        finally:
            with _lock:
                _state["message_cpu"] += time.thread_time() - began

    _receipts.ReceiptSigner.sign = _timed_sign  # type: ignore[method-assign]
    _messages.receipt_message = _timed_message
