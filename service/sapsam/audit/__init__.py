"""Audit: export a table's or a deal's events, verify them offline, replay them step by step.

The modules imported here are pure (no database or network code), so an auditor can verify an
exported deal with nothing but the package. The replay runs the table's own logic and is imported
from ``sapsam.audit.replay`` itself, so that a verification never loads it::

    from sapsam.audit import verify_export
    report = verify_export(open("deal.jsonl", encoding="utf-8"))
    print(render_text(report)); assert report.ok

``sapsam.audit.database`` and ``sapsam.audit.projection_audit`` hold the parts that read
PostgreSQL (exports, online verification, the whole-database audit). The format and the checks
are specified in docs/audit.md.
"""

from sapsam.audit.export_format import (
    AuditExport,
    ChainAnchor,
    ExportAccessError,
    ExportedEvent,
    ExportFormatError,
    ExportHeader,
    NothingToExportError,
    Requester,
    Segment,
    export_text,
    write_lines,
)
from sapsam.audit.export_limits import ExportLimitError
from sapsam.audit.export_reading import read_export
from sapsam.audit.export_selection import select_deal, select_table
from sapsam.audit.report import AuditCheck, AuditReport, Status, render_text
from sapsam.audit.verifier import verify_audit_export, verify_export

__all__ = [
    "AuditCheck",
    "AuditExport",
    "AuditReport",
    "ChainAnchor",
    "ExportAccessError",
    "ExportFormatError",
    "ExportHeader",
    "ExportLimitError",
    "ExportedEvent",
    "NothingToExportError",
    "Requester",
    "Segment",
    "Status",
    "export_text",
    "read_export",
    "render_text",
    "select_deal",
    "select_table",
    "verify_audit_export",
    "verify_export",
    "write_lines",
]
