"""Server reflection in both versions (issue 25, item 3): `grpc.reflection.v1`, which current
tools (grpcurl, grpcui, Postman) ask for first, and the older `grpc.reflection.v1alpha`. Asked
with raw ServerReflectionInfo calls on each method path: the two versions' messages are the
same field for field (v1 is v1alpha under another package name), so the v1alpha classes encode
and decode both."""

from __future__ import annotations

import grpc
import pytest
from google.protobuf import descriptor_pb2
from grpc_reflection.v1alpha import reflection_pb2 as messages
from servicekit import fresh_database, running_service

PATHS = {
    "v1": "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
    "v1alpha": "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
}


@pytest.fixture
def channel(request, tmp_path):
    with fresh_database("sqlite", request, tmp_path) as database, \
            running_service(database) as service:
        yield service.channel


def ask(channel: grpc.Channel, version: str, *requests: messages.ServerReflectionRequest
        ) -> list[messages.ServerReflectionResponse]:
    call = channel.stream_stream(
        PATHS[version], request_serializer=messages.ServerReflectionRequest.SerializeToString,
        response_deserializer=messages.ServerReflectionResponse.FromString)
    return list(call(iter(requests), timeout=10))


def files(response: messages.ServerReflectionResponse) -> list[descriptor_pb2.FileDescriptorProto]:
    return [descriptor_pb2.FileDescriptorProto.FromString(data)
            for data in response.file_descriptor_response.file_descriptor_proto]


@pytest.mark.parametrize("version", ["v1", "v1alpha"])
def test_reflection_lists_and_describes_the_services(channel, version):
    listed, bot_service, turn = ask(
        channel, version, messages.ServerReflectionRequest(list_services=""),
        messages.ServerReflectionRequest(file_containing_symbol="bummerl.v1.BotService"),
        messages.ServerReflectionRequest(file_containing_symbol="bummerl.v1.Turn"))
    names = {s.name for s in listed.list_services_response.service}
    assert {"bummerl.v1.MatchService", "bummerl.v1.BotService", "bummerl.v1.AdminService",
            "bummerl.v1.VersionTestService",
            "bummerl.v1.TournamentService",
            "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection",
            "grpc.reflection.v1alpha.ServerReflection"} <= names, names
    described = {f.name: f for f in files(bot_service)}
    assert "bummerl/v1/bot.proto" in described, sorted(described)
    bot = described["bummerl/v1/bot.proto"]
    play = next(m for s in bot.service if s.name == "BotService" for m in s.method
                if m.name == "Play")
    assert play.client_streaming and play.server_streaming
    assert play.input_type == ".bummerl.v1.PlayRequest"
    assert any(m.name == "Turn" for f in files(turn) for m in f.message_type)


@pytest.mark.parametrize("version", ["v1", "v1alpha"])
def test_reflection_describes_both_reflection_services(channel, version):
    """What a tool asks of the reflection service itself (e.g. `grpcurl describe
    grpc.reflection.v1.ServerReflection`): the v1 file is the v1alpha one renamed."""
    v1, v1alpha = ask(
        channel, version,
        messages.ServerReflectionRequest(file_containing_symbol="grpc.reflection.v1.ServerReflection"),
        messages.ServerReflectionRequest(
            file_containing_symbol="grpc.reflection.v1alpha.ServerReflection"))
    (new,), (old,) = files(v1), files(v1alpha)
    assert (new.name, new.package) == ("grpc/reflection/v1/reflection.proto", "grpc.reflection.v1")
    assert old.package == "grpc.reflection.v1alpha"
    method = new.service[0].method[0]
    assert (method.name, method.input_type, method.output_type) == (
        "ServerReflectionInfo", ".grpc.reflection.v1.ServerReflectionRequest",
        ".grpc.reflection.v1.ServerReflectionResponse")
    shape = [(m.name, [(f.name, f.number, f.type) for f in m.field]) for m in new.message_type]
    assert shape == [(m.name, [(f.name, f.number, f.type) for f in m.field])
                     for m in old.message_type]
    assert all(f.type_name.startswith(".grpc.reflection.v1.") for m in new.message_type
               for f in m.field if f.type_name)


@pytest.mark.parametrize("version", ["v1", "v1alpha"])
def test_reflection_answers_an_unknown_symbol_with_not_found(channel, version):
    (answer,) = ask(channel, version,
                    messages.ServerReflectionRequest(file_containing_symbol="no.such.Thing"))
    assert answer.error_response.error_code == grpc.StatusCode.NOT_FOUND.value[0]
