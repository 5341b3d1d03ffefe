"""``sapsam hand``, ``sapsam arrange``, ``sapsam score`` and ``sapsam rules list`` (the
command-line contract)."""

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from sapsam.cli import main
from sapsam.rules.arrangement import Arrangement, check_arrangement
from sapsam.rules.presets import PRESET_ALIASES, PRESET_DESCRIPTIONS, PRESETS
from sapsam.rules.ruleset import RULES_VERSION, RuleSet
from sapsam.rules.scoring import score_deal

WORKED_A = {"front": "2s 2h Ad", "middle": "7c 7d 9s 5h 3d", "back": "Tc Jc Qc Kc Ac"}
WORKED_B = {"front": "3♠ 3♥ 4♦", "middle": "6♣ 6♦ 8♠ 5♣ 2♦", "back": "9♣ 9♦ 10♥ 10♠ A♠"}
WORKED_DEAL = {"rules": "pagat", "seats": [WORKED_A, WORKED_B]}
WORKED_RESULT = {
    "seats": [
        {
            "seat": 0,
            "foul": False,
            "total": 1,
            "total_units": 1,
            "rows": [
                "pair of twos, kicker A",
                "pair of sevens, kickers 9 5 3",
                "ace-high straight flush (royal flush)",
            ],
        },
        {
            "seat": 1,
            "foul": False,
            "total": -1,
            "total_units": -1,
            "rows": [
                "pair of threes, kicker 4",
                "pair of sixes, kickers 8 5 2",
                "two pair, tens and nines, kicker A",
            ],
        },
    ],
    "pairs": [{"seat_a": 0, "seat_b": 1, "rows": [-1, 1, 1], "delta": 1, "units": 1}],
}
# A middle full house over a back two pair; the cards are apart from A's and B's.
FOULED = {"front": "Kd Kh Ks", "middle": "8c 8d 8h Jd Js", "back": "4c 4h 5d Qd Qh"}


def run_cli(arguments: list[str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    """Run the real command in a fresh interpreter."""
    return subprocess.run(
        [sys.executable, "-m", "sapsam.cli", *arguments],
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def run_in_process(
    arguments: list[str], stdin: str, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = main(arguments)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_score_worked_example_in_a_real_process() -> None:
    result = run_cli(["score"], json.dumps(WORKED_DEAL))
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""
    assert json.loads(result.stdout) == WORKED_RESULT


def test_score_reads_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "deal.json"
    path.write_text(json.dumps(WORKED_DEAL, indent=2), encoding="utf-8")
    assert main(["score", str(path)]) == 0
    assert json.loads(capsys.readouterr().out) == WORKED_RESULT


def test_score_defaults_to_pagat_and_accepts_a_full_rule_set(
    capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    code, out, _ = run_in_process(
        ["score"], json.dumps({"seats": [WORKED_A, WORKED_B, FOULED]}), capsys, monkeypatch
    )
    assert code == 0
    result = json.loads(out)
    assert [seat["total"] for seat in result["seats"]] == [4, 2, -6]
    fouled = result["seats"][2]
    assert fouled["foul"] is True
    assert fouled["foul_reason"] == "ROWS_OUT_OF_ORDER"
    assert fouled["foul_detail"].startswith("middle full house, eights over jacks beats back")
    assert "foul_reason" not in result["seats"][0]

    rules = {"name": "sixes", "scoring": "one_six", "row_unit": 2}
    deal: dict[str, Any] = {"rules": rules, "seats": [WORKED_A, WORKED_B, FOULED]}
    code, out, _ = run_in_process(["score"], json.dumps(deal), capsys, monkeypatch)
    assert code == 0
    # A beats B 2-1 (1 point), both scoop the foul (6 points each); all times 2.
    assert [seat["total"] for seat in json.loads(out)["seats"]] == [14, 10, -24]


def test_wrong_row_sizes_with_thirteen_cards_are_a_foul_not_an_error(
    capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    four_four_five = {"front": "2s 2h Ad 7c", "middle": "7d 9s 5h 3d", "back": "Tc Jc Qc Kc Ac"}
    deal = {"seats": [four_four_five, WORKED_B]}
    code, out, _ = run_in_process(["score"], json.dumps(deal), capsys, monkeypatch)
    assert code == 0
    seat = json.loads(out)["seats"][0]
    assert seat["foul_reason"] == "WRONG_ROW_SIZE"
    assert seat["rows"] is None
    assert seat["total"] == -3


def test_score_jsonl_prints_one_result_per_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    lines = [
        json.dumps(WORKED_DEAL),
        "",
        json.dumps({"rules": "two_four", "seats": [WORKED_B, WORKED_A]}),
    ]
    code, out, err = run_in_process(["score", "--jsonl"], "\n".join(lines), capsys, monkeypatch)
    assert (code, err) == (0, "")
    results = [json.loads(line) for line in out.splitlines()]
    assert results[0] == WORKED_RESULT
    assert results[1]["pairs"] == [
        {"seat_a": 0, "seat_b": 1, "rows": [1, -1, -1], "delta": -2, "units": -2}
    ]


def seats_with(seat: int, row: str, cards: str) -> dict[str, Any]:
    seats = [dict(WORKED_A), dict(WORKED_B)]
    seats[seat][row] = cards
    return {"seats": seats}


@pytest.mark.parametrize(
    ("stdin", "message"),
    [
        (
            json.dumps(seats_with(1, "middle", "6c Xd 8s 5c 2d")),
            "seat 1 middle: bad card 'Xd' at position 2",
        ),
        (json.dumps(seats_with(0, "front", "2s 2s Ad")), "seat 0 front: duplicate card '2s'"),
        (
            json.dumps(seats_with(1, "front", "3s 3h 2s")),
            "seat 1 front: card 2s repeats (already in seat 0 front)",
        ),
        (json.dumps(seats_with(0, "front", "2s 2h")), "seat 0: 12 cards, expected 13"),
        (json.dumps({"seats": [WORKED_A, WORKED_B, WORKED_A, WORKED_B, WORKED_A]}), "5 seats"),
        (json.dumps({"seats": [WORKED_A]}), "1 seats"),
        ('{"seats": [', "bad JSON at line 1 column 12"),
        (json.dumps({**WORKED_DEAL, "rules": "poker"}), "unknown rule set preset 'poker'"),
        (
            json.dumps({**WORKED_DEAL, "rules": {"scoring": "per_card"}}),
            "rule set key 'scoring'",
        ),
        (json.dumps({**WORKED_DEAL, "table": 1}), "unknown key 'table'"),
        (json.dumps({"seats": "all"}), "'seats' must be a list"),
        (json.dumps({"seats": [WORKED_A, {"front": "3s 3h 4d"}]}), "seat 1: missing 'middle'"),
        ("[]", "a deal must be a JSON object"),
        (
            json.dumps({**WORKED_DEAL, "rules": {"rules_version": 1, "majority": "two_rows_won"}}),
            "'majority' does not exist in rules version 1",
        ),
        (
            json.dumps({**WORKED_DEAL, "rules": {"majority": "most"}}),
            "rule set key 'majority' must be one of two_rows_won, more_rows_won",
        ),
        (json.dumps({**WORKED_DEAL, "rules": "klondike"}), "unknown rule set preset"),
    ],
)
def test_score_refuses_bad_input_with_one_line_and_no_output(
    stdin: str, message: str, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    code, out, err = run_in_process(["score"], stdin, capsys, monkeypatch)
    assert code == 2
    assert out == ""
    assert err.count("\n") == 1
    assert err.startswith("sapsam score: ")
    assert message in err


def test_jsonl_names_the_bad_line_and_prints_nothing(
    capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    lines = [
        json.dumps(WORKED_DEAL),
        json.dumps(WORKED_DEAL),
        json.dumps(seats_with(1, "middle", "6c Xd 8s 5c 2d")),
    ]
    code, out, err = run_in_process(["score", "--jsonl"], "\n".join(lines), capsys, monkeypatch)
    assert (code, out) == (2, "")
    assert err == (
        "sapsam score: line 3: seat 1 middle: bad card 'Xd' at position 2: "
        "unknown rank 'X' (use 2-9, T or 10, J, Q, K, A)\n"
    )
    code, out, err = run_in_process(
        ["score", "--jsonl"], json.dumps(WORKED_DEAL) + "\n{oops", capsys, monkeypatch
    )
    assert (code, out) == (2, "")
    assert err.startswith("sapsam score: line 2: bad JSON at column 2")


def test_bad_input_in_a_real_process_exits_2() -> None:
    result = run_cli(["score"], json.dumps(seats_with(0, "front", "2s 2h")))
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == "sapsam score: seat 0: 12 cards, expected 13\n"
    missing = run_cli(["score", "/nonexistent/deal.json"])
    assert missing.returncode == 2
    assert missing.stdout == ""
    assert missing.stderr.startswith("sapsam score: cannot read /nonexistent/deal.json")


def test_hand_prints_the_value_in_words() -> None:
    result = run_cli(["hand", "As Ks Qs Js Ts"])
    assert result.returncode == 0
    assert result.stdout == "ace-high straight flush (royal flush)\n"


def test_hand_accepts_fronts_and_separate_tokens(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["hand", "7c", "7d", "2s"]) == 0
    assert capsys.readouterr().out == "pair of sevens, kicker 2\n"
    assert main(["hand", "7c 7d 2s 9h"]) == 2
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", "sapsam hand: expected 3 or 5 cards, got 4\n")


def test_arrange_prints_the_solvers_rows_with_values() -> None:
    result = run_cli(["arrange", "2s 2h Ad 7c 7d 9s 5h 3d Tc Jc Qc Kc Ac"])
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "front   Ac Ad 5h        pair of aces, kicker 5",
        "middle  7c 7d 3d 2h 2s  two pair, sevens and twos, kicker 3",
        "back    Kc Qc Jc Tc 9s  king-high straight",
    ]


def test_arrange_json_and_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["arrange", "--json", "2s 2h Ad 7c 7d 9s 5h 3d Tc Jc Qc Kc Ac"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["front"] == "Ac Ad 5h"
    assert result["values"][2] == "king-high straight"
    assert 0 < result["objective"] <= 3
    assert main(["arrange", "2s 2h Ad 7c 7d 9s 5h 3d Tc Jc Qc Kc"]) == 2
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", "sapsam arrange: expected 13 cards, got 12\n")


def test_arrange_can_aim_at_played_rows(capsys: pytest.CaptureFixture[str]) -> None:
    cards = "2s 2h Ad 7c 7d 9s 5h 3d Tc Jc Qc Kc Ac"
    assert main(["arrange", "--json", "--objective", "played_rows", cards]) == 0
    result = json.loads(capsys.readouterr().out)
    rows = [result["front"], result["middle"], result["back"]]
    assert sorted(" ".join(rows).split()) == sorted(cards.split())
    assert 0 < result["objective"] <= 3


def test_rules_list_json_prints_every_preset_whole_in_a_real_process() -> None:
    completed = run_cli(["rules", "list", "--json"])
    assert completed.returncode == 0, completed.stderr
    listing = json.loads(completed.stdout)
    assert [entry["name"] for entry in listing] == list(PRESETS)
    for entry in listing:
        assert entry["description"] == PRESET_DESCRIPTIONS[entry["name"]]
        assert RuleSet.from_dict(entry["rule_set"]) == PRESETS[entry["name"]]
        assert entry["rule_set"] == PRESETS[entry["name"]].to_dict()
        assert entry["rule_set"]["rules_version"] == RULES_VERSION
    assert {alias for entry in listing for alias in entry["aliases"]} == set(PRESET_ALIASES)
    text = run_cli(["rules", "list"])
    assert text.returncode == 0
    assert [line.split()[0] for line in text.stdout.splitlines()] == list(PRESETS)


# One row won and two tied (pair 0-1 of docs/rules.md §7.3): seat 0 against seat 1.
ONE_WON_TWO_TIED = {
    "seats": [
        {"front": "Jc 8d 5h", "middle": "Qc Qd 7c 7d 4c", "back": "Ts Th Td 2c 2d"},
        {"front": "Jd 8h 5s", "middle": "Qh Qs 7h 7s 4d", "back": "9s 9h 9d 6c 6d"},
    ]
}


@pytest.mark.parametrize(
    ("rules", "total"),
    [
        ("pagat", 1),
        ("pagat_two_four", 1),  # 002: the extra unit needs two or three rows won
        ("two_four", 1),  # rules version 1's name, today's preset
        ("pagat_one_six", 0),  # 003: the point needs two of the three rows won
        ("pagat_one_six_two", 0),
        ("pagat_scoop_bonus", 1),
        ({"scoring": "two_four", "majority": "more_rows_won"}, 2),
        ({"scoring": "one_six", "majority": "more_rows_won"}, 1),
        ({"scoring": "two_four", "rules_version": 1}, 2),  # as version 1 recorded it
        ({"scoring": "one_six", "rules_version": 1, "one_six_two_of_three": 2}, 2),
    ],
)
def test_score_accepts_every_preset_alias_and_rule_set_of_any_version(
    rules: object, total: int, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    stdin = json.dumps({**ONE_WON_TWO_TIED, "rules": rules})
    code, out, err = run_in_process(["score"], stdin, capsys, monkeypatch)
    assert (code, err) == (0, "")
    result = json.loads(out)
    assert result["pairs"][0]["rows"] == [0, 0, 1]
    assert [seat["total"] for seat in result["seats"]] == [total, -total]


SIX_PAIRS_OF_FLUSHES = "Kc Kd Qc Qd Jc Jd Tc Td 9c 9d 8c 8d 2s"
SIX_PAIRS = "Kc Kd Qh Qs Jc Jd Th Ts 9c 9d 8h 8s 2s"
DRAGON = "Ac 2d 3h 4s 5c 6d 7h 8s 9c Td Jh Qs Kc"


def test_arrange_says_whether_to_declare_a_natural() -> None:
    # Six pairs that are also two straight flushes: under capsa_susun the rows pay more.
    flushes = run_cli(["arrange", "--preset", "capsa_susun", SIX_PAIRS_OF_FLUSHES])
    assert flushes.returncode == 0, flushes.stderr
    assert flushes.stdout.splitlines()[-1].startswith("do not declare: these rows are expected")
    plain = run_cli(["arrange", "--preset", "capsa_susun", SIX_PAIRS])
    assert plain.stdout.splitlines()[-1].startswith("declare six_pairs (3 units from each")
    listed = run_cli(["arrange", "--json", "--preset", "four_player_bonus", DRAGON])
    assert json.loads(listed.stdout)["natural"] == "dragon"
    unknown = run_cli(["arrange", "--preset", "nope", DRAGON])
    assert unknown.returncode == 2 and "unknown rule set preset 'nope'" in unknown.stderr


@pytest.mark.parametrize("name", list(PRESETS))
def test_score_accepts_every_preset_by_name_and_as_its_full_object(
    name: str, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    """Issue #17: `sapsam score` accepts every preset and full rule-set objects: the preset's
    name and its whole rule set (as `sapsam rules list --json` prints it) score alike, as the
    rules do."""
    rules = PRESETS[name].with_changes(min_seats=2)
    expected = score_deal(
        rules,
        [
            check_arrangement(Arrangement.parse(s["front"], s["middle"], s["back"]))
            for s in ONE_WON_TWO_TIED["seats"]
        ],
    ).totals
    for given in ([name] if PRESETS[name].min_seats <= 2 else []) + [rules.to_dict()]:
        stdin = json.dumps({**ONE_WON_TWO_TIED, "rules": given})
        code, out, err = run_in_process(["score"], stdin, capsys, monkeypatch)
        assert (code, err) == (0, ""), given
        assert tuple(seat["total"] for seat in json.loads(out)["seats"]) == expected
