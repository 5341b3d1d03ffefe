"""The API contract follows its conventions (buf style, Google AIPs), checked on the .proto files.

protoc compiles proto/ with source information, and the descriptors are walked: every service,
RPC, message, field, oneof, enum and enum value has a leading comment; enums start with
``*_UNSPECIFIED = 0`` and prefix every value; each RPC has its own ``XRequest``/``XResponse``;
every mutating request has ``request_id`` (but those idempotent by their content, listed in
``IDEMPOTENT_BY_CONTENT`` with why); lists paginate.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator

import pytest
from google.protobuf import descriptor_pb2

from sapsam.api import codegen

# Field numbers in descriptor.proto, used in SourceCodeInfo paths.
FILE_MESSAGE, FILE_ENUM, FILE_SERVICE = 4, 5, 6
MESSAGE_FIELD, MESSAGE_NESTED, MESSAGE_ENUM, MESSAGE_ONEOF = 2, 3, 4, 8
ENUM_VALUE, SERVICE_METHOD = 2, 2

READ_ONLY_PREFIXES = ("Get", "List", "Watch")
IDEMPOTENT_BY_CONTENT = {
    # One cosignature per (checkpoint, witness), never replaced: a retry, or the same
    # cosignature sent twice, keeps nothing new and answers the same note (added = false).
    "AddCheckpointCosignature",
}


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> list[descriptor_pb2.FileDescriptorProto]:
    output = tmp_path_factory.mktemp("descriptors") / "sapsam.pb"
    proto_root = codegen.DEFAULT_PROTO_ROOT
    sources = sorted(str(path) for path in (proto_root / "sapsam" / "v1").glob("*.proto"))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            f"-I{proto_root}",
            "--include_source_info",
            f"--descriptor_set_out={output}",
            *sources,
        ],
        check=True,
    )
    descriptor_set = descriptor_pb2.FileDescriptorSet.FromString(output.read_bytes())
    return list(descriptor_set.file)


def _comments(file: descriptor_pb2.FileDescriptorProto) -> dict[tuple[int, ...], str]:
    return {
        tuple(location.path): location.leading_comments.strip()
        for location in file.source_code_info.location
    }


def _messages(
    messages: list[descriptor_pb2.DescriptorProto], path: tuple[int, ...]
) -> Iterator[tuple[descriptor_pb2.DescriptorProto, tuple[int, ...]]]:
    for index, message in enumerate(messages):
        message_path = (*path, index)
        yield message, message_path
        yield from _messages(list(message.nested_type), (*message_path, MESSAGE_NESTED))


def _elements(file: descriptor_pb2.FileDescriptorProto) -> Iterator[tuple[str, tuple[int, ...]]]:
    """Every commentable element of a file: (its full name, its source path)."""
    package = file.package
    enums: list[tuple[descriptor_pb2.EnumDescriptorProto, tuple[int, ...]]] = [
        (enum, (FILE_ENUM, index)) for index, enum in enumerate(file.enum_type)
    ]
    for message, path in _messages(list(file.message_type), (FILE_MESSAGE,)):
        if message.options.map_entry:
            continue  # a map field's entry type is made by protoc; the field has the comment
        yield f"{package}.{message.name}", path
        for index, field in enumerate(message.field):
            yield f"{message.name}.{field.name}", (*path, MESSAGE_FIELD, index)
        for index, oneof in enumerate(message.oneof_decl):
            if not oneof.name.startswith("_"):  # synthetic oneofs of `optional` fields
                yield f"{message.name}.{oneof.name}", (*path, MESSAGE_ONEOF, index)
        enums += [
            (enum, (*path, MESSAGE_ENUM, index)) for index, enum in enumerate(message.enum_type)
        ]
    for enum, path in enums:
        yield f"{package}.{enum.name}", path
        for index, value in enumerate(enum.value):
            yield value.name, (*path, ENUM_VALUE, index)
    for service_index, service in enumerate(file.service):
        yield f"{package}.{service.name}", (FILE_SERVICE, service_index)
        for index, method in enumerate(service.method):
            yield (
                f"{service.name}.{method.name}",
                (FILE_SERVICE, service_index, SERVICE_METHOD, index),
            )


def test_package_is_versioned(files: list[descriptor_pb2.FileDescriptorProto]) -> None:
    assert {file.package for file in files} == {"sapsam.v1"}
    assert all(file.name.startswith("sapsam/v1/") for file in files)


def test_every_element_has_a_comment(files: list[descriptor_pb2.FileDescriptorProto]) -> None:
    missing = [
        f"{file.name}: {name}"
        for file in files
        for name, path in _elements(file)
        if not _comments(file).get(path)
    ]
    assert missing == []


def _screaming_snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).upper()


def test_enums_start_unspecified_and_prefix_values(
    files: list[descriptor_pb2.FileDescriptorProto],
) -> None:
    enums = [enum for file in files for enum in file.enum_type]
    enums += [
        enum
        for file in files
        for message, _ in _messages(list(file.message_type), ())
        for enum in message.enum_type
    ]
    assert enums
    for enum in enums:
        prefix = _screaming_snake(enum.name) + "_"
        assert enum.value[0].name == prefix + "UNSPECIFIED"
        assert enum.value[0].number == 0
        assert all(value.name.startswith(prefix) for value in enum.value), enum.name


def test_services_and_rpcs_follow_the_naming_rules(
    files: list[descriptor_pb2.FileDescriptorProto],
) -> None:
    messages = {
        f".{file.package}.{message.name}": message
        for file in files
        for message in file.message_type
    }
    request_types: set[str] = set()
    for file in files:
        for service in file.service:
            assert service.name.endswith("Service")
            for method in service.method:
                assert method.input_type == f".sapsam.v1.{method.name}Request"
                assert method.output_type == f".sapsam.v1.{method.name}Response"
                request_types.add(method.input_type)
                request = {field.name for field in messages[method.input_type].field}
                response = {field.name for field in messages[method.output_type].field}
                if not method.name.startswith(READ_ONLY_PREFIXES):
                    assert ("request_id" in request) != (method.name in IDEMPOTENT_BY_CONTENT)
                if method.name.startswith("List"):
                    assert {"page_size", "page_token"} <= request, method.name
                    assert "next_page_token" in response, method.name
    # Each request type belongs to exactly one RPC.
    assert len(request_types) == sum(len(s.method) for f in files for s in f.service)


def test_resource_messages_have_names(files: list[descriptor_pb2.FileDescriptorProto]) -> None:
    by_name = {message.name: message for file in files for message in file.message_type}
    for resource in ("Table", "Seat", "DealResult", "Player"):
        assert by_name[resource].field[0].name == "name", resource
