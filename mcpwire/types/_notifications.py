"""Notification params and subscriptions/listen.

Owns: $defs NotificationParams (the params of the list_changed notifications),
ProgressNotificationParams, LoggingMessageNotificationParams, CancelledNotificationParams,
ResourceUpdatedNotificationParams, SubscriptionFilter,
SubscriptionsAcknowledgedNotificationParams, SubscriptionsListenRequestParams and
SubscriptionsListenResult (specification: Basic > Patterns > Progress, Cancellation and
Subscriptions; Server > Utilities > Logging).

Notifications on a listen stream carry ``_meta["io.modelcontextprotocol/subscriptionId"]``
(``NotificationMetaObject`` in ``_meta``); the engine stamps it.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from ._base import LoggingLevel, MetaObject, ProgressToken, RequestId, ResultType, WireType

__all__ = [
    "CancelledNotificationParams",
    "LoggingMessageNotificationParams",
    "NotificationParams",
    "ProgressNotificationParams",
    "ResourceUpdatedNotificationParams",
    "SubscriptionFilter",
    "SubscriptionsAcknowledgedNotificationParams",
    "SubscriptionsListenRequestParams",
    "SubscriptionsListenResult",
]


class NotificationParams(WireType, frozen=True, kw_only=True):
    """$defs.NotificationParams: params of notifications/{tools,prompts,resources}/list_changed."""

    meta: MetaObject | UnsetType = msgspec.field(default=UNSET, name="_meta")


class ProgressNotificationParams(WireType, frozen=True, kw_only=True):
    """$defs.ProgressNotificationParams: progress for the request whose ``_meta`` carried
    ``progress_token``. Send increasing ``progress`` values
    (<https://modelcontextprotocol.io/specification/2026-07-28/basic/patterns/progress>)."""

    progress_token: ProgressToken
    progress: float
    total: float | UnsetType = UNSET
    message: str | UnsetType = UNSET
    meta: MetaObject | UnsetType = msgspec.field(default=UNSET, name="_meta")


class LoggingMessageNotificationParams(WireType, frozen=True, kw_only=True):
    """$defs.LoggingMessageNotificationParams: a log message; ``data`` is any JSON value.

    Sent only for a request whose ``_meta`` set a log level
    (<https://modelcontextprotocol.io/specification/2026-07-28/server/utilities/logging>).
    """

    level: LoggingLevel
    logger: str | UnsetType = UNSET
    data: Any
    meta: MetaObject | UnsetType = msgspec.field(default=UNSET, name="_meta")


class CancelledNotificationParams(WireType, frozen=True, kw_only=True):
    """$defs.CancelledNotificationParams: the sender no longer wants ``request_id``'s answer."""

    request_id: RequestId
    reason: str | UnsetType = UNSET
    meta: MetaObject | UnsetType = msgspec.field(default=UNSET, name="_meta")


class ResourceUpdatedNotificationParams(WireType, frozen=True, kw_only=True):
    """$defs.ResourceUpdatedNotificationParams: a subscribed resource (or a sub-resource of it)
    changed; read it again to see how."""

    uri: str
    meta: MetaObject | UnsetType = msgspec.field(default=UNSET, name="_meta")


class SubscriptionFilter(WireType, frozen=True, kw_only=True):
    """$defs.SubscriptionFilter: which notifications a listen stream carries; all opt-in."""

    tools_list_changed: bool | UnsetType = UNSET
    prompts_list_changed: bool | UnsetType = UNSET
    resources_list_changed: bool | UnsetType = UNSET
    resource_subscriptions: list[str] | UnsetType = UNSET


class SubscriptionsAcknowledgedNotificationParams(WireType, frozen=True, kw_only=True):
    """$defs.SubscriptionsAcknowledgedNotificationParams: the first frame of a listen stream;
    ``notifications`` is the subset of the request's filter the server will honour."""

    notifications: SubscriptionFilter
    meta: MetaObject | UnsetType = msgspec.field(default=UNSET, name="_meta")


class SubscriptionsListenRequestParams(WireType, frozen=True, kw_only=True):
    """$defs.SubscriptionsListenRequestParams: params of subscriptions/listen."""

    notifications: SubscriptionFilter
    meta: MetaObject = msgspec.field(name="_meta")


class SubscriptionsListenResult(WireType, frozen=True, kw_only=True):
    """$defs.SubscriptionsListenResult: ends a listen stream gracefully.

    ``meta`` must hold the subscription id (``SubscriptionsListenResultMetaObject``).
    """

    result_type: ResultType = "complete"
    meta: MetaObject = msgspec.field(name="_meta")
