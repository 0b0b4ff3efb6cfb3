"""Health endpoints' answers, in the Kubernetes API server's healthz format.

`/healthz` (and `/livez`, `/readyz`) runs every check. All passing: 200 "ok", or with `?verbose`
one line per check (`[+]ping ok`) and "healthz check passed". Any failing: 500 with the lines
always shown, a failure's reason withheld (`[-]shutdown failed: reason withheld`, the endpoint is
public; the reason goes to the log) and "healthz check failed". `?exclude=<name>` skips a check;
names that match none are listed, sorted, in a warning line. `/healthz/<name>` runs one check
and does show the reason.

A check is a function returning True when it passes; False, or a string giving the reason, when
it fails. A check that raises fails with the exception as its reason.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Collection
from collections.abc import Mapping
from dataclasses import dataclass

from scheduler.app.go_text import go_quote
from scheduler.observability import get_logger
from scheduler.observability import log_v

HealthCheck = Callable[[], bool | str]

OK, FAILED = 200, 500

# The check an endpoint runs when it was given none (as the API server installs it).
PING: Mapping[str, HealthCheck] = {"ping": lambda: True}

log = get_logger("healthz")


@dataclass(frozen=True, slots=True)
class Answer:
    """`nosniff`: whether the answer carries `X-Content-Type-Options: nosniff`. Upstream's
    endpoint answers and failures do (set explicitly, or by Go's http.Error); a single check's
    plain "ok" is written bare and does not."""

    status: int
    text: str
    nosniff: bool = True


def run_check(check: HealthCheck) -> str | None:
    """None if the check passes, otherwise why it failed."""
    try:
        outcome = check()
    except Exception as err:  # a broken check must fail its endpoint, not the server
        return f"{type(err).__name__}: {err}"
    if outcome is True:
        return None
    return outcome or "check failed"


def endpoint_answer(
    endpoint: str,
    checks: Mapping[str, HealthCheck],
    *,
    verbose: bool = False,
    exclude: Collection[str] = (),
    observe: Callable[[str, str, bool], None] | None = None,
) -> Answer:
    """The answer of `/<endpoint>`, e.g. endpoint "readyz". `observe(endpoint, check, passed)`
    is told the outcome of each check run (the health SLIs)."""
    # Upstream collects them in a string set, which lists its members sorted.
    unmatched = sorted({name for name in exclude if name not in checks})
    lines: list[str] = []
    failures: list[str] = []
    for name, check in checks.items():
        if name in exclude:
            lines.append(f"[+]{name} excluded: ok")
            continue
        reason = run_check(check)
        if observe is not None:
            observe(endpoint, name, reason is None)
        if reason is None:
            lines.append(f"[+]{name} ok")
        else:
            lines.append(f"[-]{name} failed: reason withheld")
            failures.append(f"[-]{name} failed: {reason}")
    if unmatched:
        quoted = ",".join(go_quote(name) for name in unmatched)
        lines.append(f"warn: some health checks cannot be excluded: no matches for {quoted}")
    report = "".join(f"{line}\n" for line in lines)
    if failures:
        log_v(log, 2, f"{endpoint} check failed", failures=failures)
        return Answer(FAILED, f"{report}{endpoint} check failed\n")
    if not verbose:
        return Answer(OK, "ok")
    return Answer(OK, f"{report}{endpoint} check passed\n")


def check_answer(check: HealthCheck) -> Answer:
    """The answer of `/<endpoint>/<name>`: one check, its reason shown."""
    reason = run_check(check)
    if reason is None:
        return Answer(OK, "ok", nosniff=False)
    return Answer(FAILED, f"internal server error: {reason}\n")
