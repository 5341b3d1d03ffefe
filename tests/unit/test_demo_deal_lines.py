"""`sapsam demo` prints each deal within 80 columns whatever a seat declared: a seat's rows (61
columns) with "  declared six pairs" after them took 81, and a longer natural or a foul more
(tests/clients/test_demo.py's capsa_susun run failed so whenever a bot declared a natural: 81
and 85 seen); what was said then goes under the rows."""

from __future__ import annotations

import pytest

from sapsam.cli.demo_command import _deal_lines
from sapsam.rules.naturals import Natural
from sapsam_proto.v1 import table_pb2

ROWS = table_pb2.Arrangement(
    front=["Ts", "Th", "Td"],
    middle=["9c", "9d", "8s", "8h", "2c"],
    back=["Ac", "Kc", "Qc", "Jc", "3c"],
)


@pytest.mark.parametrize("natural", [natural.value for natural in Natural])
@pytest.mark.parametrize("foul", [False, True])
def test_every_line_fits_80_columns_and_says_the_declaration(natural: str, foul: bool) -> None:
    seat = "tables/t/seats/3"
    result = table_pb2.DealResult(
        deal_number=12,
        dealer_seat="tables/t/seats/0",
        seats=[
            table_pb2.DealSeatResult(
                seat=seat, arrangement=ROWS, natural=natural, foul=foul, score_delta=-36
            )
        ],
    )
    lines = _deal_lines(result, {seat: "a long player name here"})
    assert max(len(line) for line in lines) <= 80, lines
    shown = "\n".join(lines)
    assert "Ts Th Td | 9c 9d 8s 8h 2c | Ac Kc Qc Jc 3c" in shown
    assert ("FOUL" in shown) == foul
    said = f"declared {natural.replace('_', ' ')}"
    assert (said in shown) == (natural != "none")
