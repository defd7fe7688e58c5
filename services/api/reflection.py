"""Server reflection in both versions: `grpc.reflection.v1`, which current tools (grpcurl,
grpcui, Postman) ask for first, and the older `grpc.reflection.v1alpha`.

grpcio-reflection (1.85.1, the newest release) serves only v1alpha. v1 is v1alpha under another
package name: the same messages, field for field, so the same bytes on the wire. So the library's
own servicer serves both, v1 under its method path, and v1's file (v1alpha's descriptor with the
package renamed) is added to the descriptor pool, so that tools can list and describe v1 too.
"""

from __future__ import annotations

from collections.abc import Iterable

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.descriptor import FileDescriptor
from grpc_reflection.v1alpha import reflection_pb2 as v1alpha
from grpc_reflection.v1alpha import reflection_pb2_grpc as v1alpha_grpc
from grpc_reflection.v1alpha._async import ReflectionServicer

V1_PACKAGE = "grpc.reflection.v1"
V1_FILE = "grpc/reflection/v1/reflection.proto"
V1_SERVICE = f"{V1_PACKAGE}.ServerReflection"
V1ALPHA_SERVICE = v1alpha.DESCRIPTOR.services_by_name["ServerReflection"].full_name


def _renamed(type_name: str, old: str) -> str:
    return f".{V1_PACKAGE}.{type_name[len(old):]}" if type_name.startswith(old) else type_name


def v1_file() -> FileDescriptor:
    """The file of grpc.reflection.v1 in the default descriptor pool (added on first use)."""
    pool = descriptor_pool.Default()
    try:
        return pool.FindFileByName(V1_FILE)
    except KeyError:
        pass
    proto = descriptor_pb2.FileDescriptorProto.FromString(v1alpha.DESCRIPTOR.serialized_pb)
    old = f".{proto.package}."
    proto.name, proto.package = V1_FILE, V1_PACKAGE
    proto.ClearField("options")  # v1alpha's language options (java_package, ...) name v1alpha
    for message in proto.message_type:
        assert not message.nested_type and not message.enum_type  # (none in either version)
        for field in message.field:
            if field.type_name:  # (a message field's; setting "" would mark it set)
                field.type_name = _renamed(field.type_name, old)
    for service in proto.service:
        for method in service.method:
            method.input_type = _renamed(method.input_type, old)
            method.output_type = _renamed(method.output_type, old)
    pool.AddSerializedFile(proto.SerializeToString())
    return pool.FindFileByName(V1_FILE)


def enable(service_names: Iterable[str], server: grpc.aio.Server) -> None:
    """Serve reflection of `service_names` and of both reflection services on `server`."""
    v1_file()
    servicer = ReflectionServicer((*service_names, V1_SERVICE, V1ALPHA_SERVICE))
    v1alpha_grpc.add_ServerReflectionServicer_to_server(servicer, server)
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(V1_SERVICE, {
        "ServerReflectionInfo": grpc.stream_stream_rpc_method_handler(
            servicer.ServerReflectionInfo,
            request_deserializer=v1alpha.ServerReflectionRequest.FromString,
            response_serializer=v1alpha.ServerReflectionResponse.SerializeToString),
    }),))
