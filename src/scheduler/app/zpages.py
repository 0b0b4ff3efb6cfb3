"""`/statusz` and `/flagz`: the z-pages kube-scheduler v1.36 serves by default (feature gates
ComponentStatusz and ComponentFlagz, beta and on).

`/statusz` tells when the process started, how long it has run, its versions and its main
paths; `/flagz` every flag of `run` with its value (`flag_values`). Each answers in two forms,
chosen by the Accept header as upstream chooses:

- text (no Accept, `*/*` or `text/plain`): a page for people, whose separators vary from one
  request to the next, as upstream's do, so that no script comes to depend on them;
- JSON, for `application/json;as=Statusz;v=v1beta1;g=config.k8s.io` (or `as=Flagz`, or
  `v=v1alpha1`): the structured objects of the `config.k8s.io` group.

Anything else is refused with 406 and a Status object, in YAML if YAML was asked for. Where
upstream reports its Go version, the text form gives the Python version; the JSON form leaves
the field out rather than fill it with something that is not Go's.
"""

from __future__ import annotations

import json
import platform
import random
from collections.abc import Mapping
from datetime import UTC
from datetime import datetime
from typing import Final

import yaml
from aiohttp import web

from scheduler.framework.clock import Clock

COMPONENT: Final = "kube-pyscheduler"
_GROUP: Final = "config.k8s.io"
_VERSIONS: Final = ("v1beta1", "v1alpha1")
_WARNING: Final = (
    "Warning: This endpoint is not meant to be machine parseable, has no formatting "
    "compatibility guarantees and is for debugging purposes only."
)
_NOT_ACCEPTABLE: Final = (
    "only the following media types are accepted: application/json, application/yaml, text/plain"
)
_TEXT_TYPES: Final = frozenset({"*/*", "text/*", "text/plain"})
_SEPARATORS: Final = (": ", "= ", "  ")

_JSON = "json"


class ZPages:
    """The two pages of one process; `flags` None turns `/flagz` off, `statusz` False
    `/statusz` (the feature gates set to false)."""

    def __init__(
        self,
        clock: Clock,
        *,
        binary_version: str,
        emulation_version: str,
        flags: Mapping[str, str] | None,
        statusz: bool = True,
        rng: random.Random | None = None,
    ) -> None:
        self._clock = clock
        self._started = clock.wall()
        self._binary_version = binary_version
        self._emulation_version = emulation_version
        self._flags = dict(flags) if flags is not None else None
        self._statusz_on = statusz
        self._rng = rng if rng is not None else random.Random()
        listed = ["/configz", "/healthz", "/livez", "/metrics", "/readyz"]
        if self._flags is not None:
            listed.append("/flagz")
        self._paths = sorted(listed)

    def add_routes(self, app: web.Application) -> None:
        # Any method, as upstream's handlers (they never look at it).
        if self._statusz_on:
            app.router.add_route("*", "/statusz", self._statusz)
        if self._flags is not None:
            app.router.add_route("*", "/flagz", self._flagz)

    async def _statusz(self, request: web.Request) -> web.Response:
        form = _negotiate(request.headers.get("Accept"), "Statusz")
        if form is None:
            return _not_acceptable(request.headers.get("Accept", ""))
        uptime = int((self._clock.wall() - self._started).total_seconds())
        if form != "text":
            body = {
                **_object_head("Statusz", form),
                "startTime": self._started.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "uptimeSeconds": uptime,
                "binaryVersion": self._binary_version,
                "emulationVersion": self._emulation_version,
                "paths": self._paths,
            }
            return _json_answer(body, "Statusz", form)
        hours, rest = divmod(uptime, 3600)
        sep = self._rng.choice(_SEPARATORS)
        lines = [
            "",
            f"{COMPONENT} statusz",
            _WARNING,
            "",
            f"Started{sep}{_unix_date(self._started)}",
            f"Up{sep}{hours} hr {rest // 60:02} min {rest % 60:02} sec",
            f"Python version{sep}{platform.python_version()}",
            f"Binary version{sep}{self._binary_version}",
            f"Emulation version{sep}{self._emulation_version}",
            f"Paths{sep}{' '.join(self._paths)}",
        ]
        return _text_answer(lines)

    async def _flagz(self, request: web.Request) -> web.Response:
        assert self._flags is not None
        form = _negotiate(request.headers.get("Accept"), "Flagz")
        if form is None:
            return _not_acceptable(request.headers.get("Accept", ""))
        if form != "text":
            return _json_answer(
                {**_object_head("Flagz", form), "flags": self._flags}, "Flagz", form
            )
        sep = self._rng.choice(_SEPARATORS)
        lines = ["", f"{COMPONENT} flagz", _WARNING]
        lines.extend(f"{name}{sep}{value}" for name, value in self._flags.items())
        return _text_answer(lines)


def _negotiate(accept: str | None, kind: str) -> str | None:
    """ "text", a `config.k8s.io` version for the JSON form, or None when nothing offered is
    served; the offers are taken by quality, then in the order given."""
    if not accept:
        return "text"
    offers: list[tuple[float, int, str, dict[str, str]]] = []
    for index, offer in enumerate(accept.split(",")):
        media, *raw_params = (part.strip() for part in offer.split(";"))
        params = dict(p.partition("=")[::2] for p in raw_params if "=" in p)
        try:
            quality = float(params.pop("q", "1"))
        except ValueError:
            quality = 0.0
        offers.append((-quality, index, media.lower(), params))
    for negative_quality, _, media, params in sorted(offers):
        if negative_quality >= 0:
            continue
        if media in _TEXT_TYPES:
            return "text"
        wanted = (params.get("as"), params.get("g"), params.get("v"))
        if media == "application/json" and wanted[:2] == (kind, _GROUP) and wanted[2] in _VERSIONS:
            return str(wanted[2])
    return None


def _object_head(kind: str, version: str) -> dict[str, object]:
    return {"kind": kind, "apiVersion": f"{_GROUP}/{version}", "metadata": {"name": COMPONENT}}


def _json_answer(body: Mapping[str, object], kind: str, version: str) -> web.Response:
    content_type = f"application/{_JSON};g={_GROUP};v={version};as={kind}"
    return web.Response(
        body=json.dumps(body, separators=(",", ":")).encode(),
        headers={"Content-Type": content_type, "Cache-Control": "no-cache, private"},
    )


def _text_answer(lines: list[str]) -> web.Response:
    return web.Response(
        body="".join(f"{line}\n" for line in lines).encode(),
        headers={
            "Content-Type": "text/plain; charset=utf-8",
            "Cache-Control": "no-cache, private",
        },
    )


def _not_acceptable(accept: str) -> web.Response:
    status = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": _NOT_ACCEPTABLE,
        "reason": "NotAcceptable",
        "code": 406,
    }
    if "application/yaml" in accept.lower():
        return web.Response(
            status=406,
            body=yaml.safe_dump(status, sort_keys=True).encode(),
            headers={"Content-Type": "application/yaml"},
        )
    return web.Response(
        status=406,
        body=json.dumps(status, separators=(",", ":")).encode(),
        headers={"Content-Type": "application/json"},
    )


def _unix_date(moment: datetime) -> str:
    """Go's time.UnixDate layout, in UTC: "Sun Dec  6 07:15:42 UTC 2026"."""
    utc = moment.astimezone(UTC)
    return f"{utc:%a %b} {utc.day:2} {utc:%H:%M:%S} UTC {utc.year}"
