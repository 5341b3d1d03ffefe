"""The committed generated code (the one copy, ``sapsam_proto.v1`` in clients/sapsam_proto) is
exactly what `make proto` produces from proto/."""

from __future__ import annotations

from pathlib import Path

from sapsam.api import codegen

COMMITTED = codegen.DEFAULT_OUTPUT / codegen.OUTPUT_PACKAGE


def _tree(root: Path) -> dict[str, str]:
    return {
        str(path.relative_to(root)): path.read_text(encoding="utf-8")
        for path in sorted(root.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


def test_regenerating_changes_nothing(tmp_path: Path) -> None:
    codegen.generate(codegen.DEFAULT_PROTO_ROOT, tmp_path)
    fresh = _tree(tmp_path / codegen.OUTPUT_PACKAGE)
    committed = _tree(COMMITTED)
    assert sorted(fresh) == sorted(committed), "run `make proto` and commit the result"
    stale = [name for name in fresh if fresh[name] != committed[name]]
    assert stale == [], f"generated code is stale, run `make proto`: {stale}"


def test_generated_code_imports_relatively() -> None:
    # The folder must work wherever it is placed, so no module names the proto package directly.
    for name, text in _tree(COMMITTED).items():
        assert "from sapsam.v1 import" not in text, name


def test_services_are_importable_with_every_rpc() -> None:
    from sapsam_proto.v1 import player_service_pb2, table_service_pb2

    table_service = table_service_pb2.DESCRIPTOR.services_by_name["TableService"]
    assert [method.name for method in table_service.methods] == [
        "CreateTable",
        "GetTable",
        "ListTables",
        "JoinTable",
        "ChooseDealer",
        "StartDeal",
        "ContributeEntropy",
        "CutDeck",
        "GetMyHand",
        "GetSuggestion",
        "CommitArrangement",
        "DeclareNatural",
        "ConfirmArrangement",
        "RevealArrangement",
        "AnnounceSurrender",
        "GetDealResult",
        "WatchTable",
        "ListMyDeals",
        "ListRuleSets",
        "PlaceCards",
        "CommitFantasyland",
        "RevealFantasyland",
        "RevealDiscards",
    ]
    assert table_service.methods_by_name["WatchTable"].server_streaming
    player_service = player_service_pb2.DESCRIPTOR.services_by_name["PlayerService"]
    assert [method.name for method in player_service.methods] == [
        "RegisterPlayer",
        "GetPlayer",
        "RotateToken",
        "RevokePlayerTokens",
        "RegisterPlayerKey",
    ]


def test_server_and_client_import_the_one_copy() -> None:
    # No second copy may creep back in beside the server or the SDK.
    import sapsam
    import sapsam_client
    import sapsam_proto

    assert Path(sapsam_proto.__file__).resolve().parent == codegen.DEFAULT_OUTPUT.resolve()
    for package in (sapsam, sapsam_client):
        root = Path(package.__file__).resolve().parent
        copies = [path for path in root.rglob("*_pb2.py") if "__pycache__" not in path.parts]
        assert copies == [], copies
