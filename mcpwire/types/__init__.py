"""The MCP 2026-07-28 wire types: msgspec Structs mirroring the official JSON schema.

Every class is named after its ``$defs`` entry in ``schema-2026-07-28.json`` (inline objects the
schema leaves unnamed get names of their own, listed in each module). Python fields are
snake_case, the wire is camelCase; optional properties default to ``msgspec.UNSET`` so absent
stays absent; unknown fields are ignored on decode; every value is frozen and keyword-only.
``tests/wire/test_types_schema.py`` holds the field sets, the required sets and encoded samples of
every Struct against the schema.

Where the schema has a union msgspec cannot decode, this package picks a decodable form:

- Resource contents (TextResourceContents | BlobResourceContents, told apart only by ``text``
  or ``blob``): fields are typed :class:`ResourceContents`, one Struct holding both, with the
  two schema classes as subclasses for building values (``_content``).
- Elicitation params (form, whose ``mode`` may be absent, | URL): ``ElicitRequest.params`` is
  :class:`ElicitRequestParams`, one Struct holding both, with ElicitRequestFormParams and
  ElicitRequestURLParams as subclasses for building (``_elicitation``).
- Input responses (no discriminator at all): ``input_responses`` values decode as JSON objects
  and :func:`input_response_type` names the class to convert each into (``_mrtr``).
- Elicitation primitive schemas and the two schema-valued Tool fields stay JSON as given.

Content blocks, completion references and input requests are msgspec tagged unions (on
``type``, ``type`` and ``method``) and decode directly.
"""

from __future__ import annotations

from ._base import (
    Annotations,
    CacheScope,
    Cursor,
    Icon,
    Implementation,
    InputResponses,
    LoggingLevel,
    MetaObject,
    PaginatedRequestParams,
    ProgressToken,
    RequestId,
    RequestParams,
    Result,
    ResultType,
    Role,
    WireType,
)
from ._capabilities import (
    ClientCapabilities,
    ElicitationCapability,
    PromptsCapability,
    ResourcesCapability,
    RootsCapability,
    SamplingCapability,
    ServerCapabilities,
    ToolsCapability,
)
from ._completion import (
    CompleteRequestParams,
    CompleteResult,
    Completion,
    CompletionArgument,
    CompletionContext,
    PromptReference,
    ResourceTemplateReference,
)
from ._content import (
    AudioContent,
    BlobResourceContents,
    ContentBlock,
    EmbeddedResource,
    ImageContent,
    ResourceContents,
    ResourceLink,
    SamplingMessageContentBlock,
    TextContent,
    TextResourceContents,
    ToolResultContent,
    ToolUseContent,
)
from ._discover import DiscoverResult, InitializeResult
from ._elicitation import (
    BooleanSchema,
    ElicitRequestFormParams,
    ElicitRequestParams,
    ElicitRequestURLParams,
    ElicitResult,
    EnumOption,
    LegacyTitledEnumSchema,
    NumberSchema,
    StringSchema,
    TitledEnumItems,
    TitledMultiSelectEnumSchema,
    TitledSingleSelectEnumSchema,
    UntitledEnumItems,
    UntitledMultiSelectEnumSchema,
    UntitledSingleSelectEnumSchema,
)
from ._meta import (
    CLIENT_CAPABILITIES_META_KEY,
    CLIENT_INFO_META_KEY,
    LOG_LEVEL_META_KEY,
    META_KEY_PATTERN,
    PROGRESS_TOKEN_META_KEY,
    PROTOCOL_VERSION_META_KEY,
    SERVER_INFO_META_KEY,
    SUBSCRIPTION_ID_META_KEY,
    NotificationMetaObject,
    RequestMetaObject,
    ResultMetaObject,
    SubscriptionsListenResultMetaObject,
)
from ._mrtr import (
    CreateMessageRequest,
    ElicitRequest,
    InputRequest,
    InputRequiredResult,
    InputResponse,
    ListRootsRequest,
    ListRootsRequestParams,
    ListRootsResult,
    Root,
    input_response_type,
)
from ._notifications import (
    CancelledNotificationParams,
    LoggingMessageNotificationParams,
    NotificationParams,
    ProgressNotificationParams,
    ResourceUpdatedNotificationParams,
    SubscriptionFilter,
    SubscriptionsAcknowledgedNotificationParams,
    SubscriptionsListenRequestParams,
    SubscriptionsListenResult,
)
from ._prompts import (
    GetPromptRequestParams,
    GetPromptResult,
    ListPromptsResult,
    Prompt,
    PromptArgument,
    PromptMessage,
)
from ._resources import (
    ListResourcesResult,
    ListResourceTemplatesResult,
    ReadResourceRequestParams,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
)
from ._sampling import (
    CreateMessageRequestParams,
    CreateMessageResult,
    ModelHint,
    ModelPreferences,
    SamplingMessage,
    ToolChoice,
)
from ._tools import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    Tool,
    ToolAnnotations,
)

__all__ = [
    "CLIENT_CAPABILITIES_META_KEY",
    "CLIENT_INFO_META_KEY",
    "LOG_LEVEL_META_KEY",
    "META_KEY_PATTERN",
    "PROGRESS_TOKEN_META_KEY",
    "PROTOCOL_VERSION_META_KEY",
    "SERVER_INFO_META_KEY",
    "SUBSCRIPTION_ID_META_KEY",
    "Annotations",
    "AudioContent",
    "BlobResourceContents",
    "BooleanSchema",
    "CacheScope",
    "CallToolRequestParams",
    "CallToolResult",
    "CancelledNotificationParams",
    "ClientCapabilities",
    "CompleteRequestParams",
    "CompleteResult",
    "Completion",
    "CompletionArgument",
    "CompletionContext",
    "ContentBlock",
    "CreateMessageRequest",
    "CreateMessageRequestParams",
    "CreateMessageResult",
    "Cursor",
    "DiscoverResult",
    "InitializeResult",
    "ElicitRequest",
    "ElicitRequestFormParams",
    "ElicitRequestParams",
    "ElicitRequestURLParams",
    "ElicitResult",
    "ElicitationCapability",
    "EmbeddedResource",
    "EnumOption",
    "GetPromptRequestParams",
    "GetPromptResult",
    "Icon",
    "ImageContent",
    "Implementation",
    "InputRequest",
    "InputRequiredResult",
    "InputResponse",
    "InputResponses",
    "LegacyTitledEnumSchema",
    "ListPromptsResult",
    "ListResourceTemplatesResult",
    "ListResourcesResult",
    "ListRootsRequest",
    "ListRootsRequestParams",
    "ListRootsResult",
    "ListToolsResult",
    "LoggingLevel",
    "LoggingMessageNotificationParams",
    "MetaObject",
    "ModelHint",
    "ModelPreferences",
    "NotificationMetaObject",
    "NotificationParams",
    "NumberSchema",
    "PaginatedRequestParams",
    "ProgressNotificationParams",
    "ProgressToken",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "PromptReference",
    "PromptsCapability",
    "ReadResourceRequestParams",
    "ReadResourceResult",
    "RequestId",
    "RequestMetaObject",
    "RequestParams",
    "Resource",
    "ResourceContents",
    "ResourceLink",
    "ResourceTemplate",
    "ResourceTemplateReference",
    "ResourceUpdatedNotificationParams",
    "ResourcesCapability",
    "Result",
    "ResultMetaObject",
    "ResultType",
    "Role",
    "Root",
    "RootsCapability",
    "SamplingCapability",
    "SamplingMessage",
    "SamplingMessageContentBlock",
    "ServerCapabilities",
    "StringSchema",
    "SubscriptionFilter",
    "SubscriptionsAcknowledgedNotificationParams",
    "SubscriptionsListenRequestParams",
    "SubscriptionsListenResult",
    "SubscriptionsListenResultMetaObject",
    "TextContent",
    "TextResourceContents",
    "TitledEnumItems",
    "TitledMultiSelectEnumSchema",
    "TitledSingleSelectEnumSchema",
    "Tool",
    "ToolAnnotations",
    "ToolChoice",
    "ToolResultContent",
    "ToolUseContent",
    "ToolsCapability",
    "UntitledEnumItems",
    "UntitledMultiSelectEnumSchema",
    "UntitledSingleSelectEnumSchema",
    "WireType",
    "input_response_type",
]

_ENVELOPE = (
    "JSON-RPC envelope: the codec decodes it in two stages with msgspec.Raw params/result "
    "(STYLE habit 5); the params and result types inside are mirrored here"
)
_ERROR = "JSON-RPC error object: owned by the error layer (mcpwire._errors)"
_ABSTRACT = "abstract base of the schema: its fields are spelled out in each concrete type"
_JSON = "plain JSON: Any, dict[str, Any] or list[Any]"
_UNDECODABLE = (
    "untagged union of the primitive schema Structs (members share `type` values): the "
    "members are mirrored; decoded form properties stay dicts"
)

# $defs intentionally not mirrored by a Struct or alias of the same name, and why. Every other
# $def is exported under its own name; tests/wire/test_types_schema.py checks that this split covers
# the whole schema. (The schema of 2026-07-28 has no tasks-extension $defs to skip.)
_UNMIRRORED_DEFS: dict[str, str] = {
    **dict.fromkeys(
        [
            "JSONRPCMessage",
            "JSONRPCRequest",
            "JSONRPCNotification",
            "JSONRPCResponse",
            "JSONRPCResultResponse",
            "JSONRPCErrorResponse",
            "Request",
            "Notification",
            "ClientRequest",
            "ClientNotification",
            "ServerNotification",
            "DiscoverRequest",
            "ListToolsRequest",
            "CallToolRequest",
            "ListResourcesRequest",
            "ListResourceTemplatesRequest",
            "ReadResourceRequest",
            "ListPromptsRequest",
            "GetPromptRequest",
            "CompleteRequest",
            "PaginatedRequest",
            "SubscriptionsListenRequest",
            "CancelledNotification",
            "ProgressNotification",
            "LoggingMessageNotification",
            "ResourceUpdatedNotification",
            "ResourceListChangedNotification",
            "PromptListChangedNotification",
            "ToolListChangedNotification",
            "SubscriptionsAcknowledgedNotification",
            "DiscoverResultResponse",
            "ListToolsResultResponse",
            "CallToolResultResponse",
            "ListResourcesResultResponse",
            "ListResourceTemplatesResultResponse",
            "ReadResourceResultResponse",
            "ListPromptsResultResponse",
            "GetPromptResultResponse",
            "CompleteResultResponse",
            "SubscriptionsListenResultResponse",
        ],
        _ENVELOPE,
    ),
    **dict.fromkeys(
        [
            "Error",
            "ParseError",
            "InvalidRequestError",
            "MethodNotFoundError",
            "InvalidParamsError",
            "InternalError",
            "HeaderMismatchError",
            "MissingRequiredClientCapabilityError",
            "UnsupportedProtocolVersionError",
        ],
        _ERROR,
    ),
    **dict.fromkeys(
        [
            "BaseMetadata",
            "Icons",
            "CacheableResult",
            "PaginatedResult",
            "InputResponseRequestParams",
            "ResourceRequestParams",
        ],
        _ABSTRACT,
    ),
    **dict.fromkeys(["JSONValue", "JSONObject", "JSONArray"], _JSON),
    **dict.fromkeys(
        [
            "PrimitiveSchemaDefinition",
            "EnumSchema",
            "SingleSelectEnumSchema",
            "MultiSelectEnumSchema",
        ],
        _UNDECODABLE,
    ),
    "EmptyResult": "the schema's $ref to Result: use Result",
    "ClientResult": "the schema's $ref to Result: use Result",
    "ServerResult": "union of every result type; which one a response holds follows from the "
    "request's method (and resultType), so the engine picks the type",
    "InputRequests": "dict[str, InputRequest] (InputRequiredResult.input_requests)",
}
