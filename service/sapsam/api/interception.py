"""A base for server interceptors that run code around each call's behaviour.

grpc's ``ServerInterceptor`` only sees the method name and metadata before a handler is chosen;
to act on the request, the servicer context and the outcome, an interceptor has to wrap the
handler's behaviour. :class:`CallInterceptor` does that once for all four call shapes, so the
auth, error and logging interceptors each implement just ``around`` (one response) and
``around_stream`` (a streamed response).

They run in the thread that runs the servicer (grpc's sync server), so a context variable set in
``around`` is visible to the servicer.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Iterator
from typing import Any

import grpc

Proceed = Callable[[], Any]
ProceedStream = Callable[[], Iterator[Any]]


class CallInterceptor(grpc.ServerInterceptor, abc.ABC):  # type: ignore[misc]
    """Runs :meth:`around` or :meth:`around_stream` around every call's behaviour."""

    @abc.abstractmethod
    def around(
        self, method: str, request: Any, context: grpc.ServicerContext, proceed: Proceed
    ) -> Any:
        """Run the call (``proceed()``) and return its single response."""

    @abc.abstractmethod
    def around_stream(
        self,
        method: str,
        request: Any,
        context: grpc.ServicerContext,
        proceed: ProceedStream,
    ) -> Iterator[Any]:
        """Run a response-streaming call (``proceed()``), yielding its responses."""

    def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], grpc.RpcMethodHandler | None],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler | None:
        """Wrap the chosen handler's behaviour; unknown methods stay unknown (UNIMPLEMENTED)."""
        handler = continuation(handler_call_details)
        if handler is None:
            return None
        method: str = handler_call_details.method
        codecs = {
            "request_deserializer": handler.request_deserializer,
            "response_serializer": handler.response_serializer,
        }
        if handler.response_streaming:
            inner_stream = (
                handler.stream_stream if handler.request_streaming else handler.unary_stream
            )

            def streamed(request: Any, context: grpc.ServicerContext) -> Iterator[Any]:
                return self.around_stream(
                    method, request, context, lambda: iter(inner_stream(request, context))
                )

            if handler.request_streaming:
                return grpc.stream_stream_rpc_method_handler(streamed, **codecs)
            return grpc.unary_stream_rpc_method_handler(streamed, **codecs)
        inner = handler.stream_unary if handler.request_streaming else handler.unary_unary

        def single(request: Any, context: grpc.ServicerContext) -> Any:
            return self.around(method, request, context, lambda: inner(request, context))

        if handler.request_streaming:
            return grpc.stream_unary_rpc_method_handler(single, **codecs)
        return grpc.unary_unary_rpc_method_handler(single, **codecs)
