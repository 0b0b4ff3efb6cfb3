"""The document `/configz` serves: the configuration in force, as the config file would say it.

It is rendered on the first request, not at start-up: rendering dumps the whole effective
configuration to YAML and reads it back, time the daemon would otherwise spend before its
informers start, for an endpoint that most deployments never call. The configuration does
not change while the daemon runs, so the first rendering serves every later request.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from scheduler.config import EffectiveProfile
from scheduler.config import KubeSchedulerConfiguration
from scheduler.config import dump_config
from scheduler.config.yaml_text import safe_load


class ConfigDocument:
    def __init__(
        self, config: KubeSchedulerConfiguration, profiles: Sequence[EffectiveProfile]
    ) -> None:
        self._config = config
        self._profiles = list(profiles)
        self._document: Any = None

    def get(self) -> Any:
        if self._document is None:
            self._document = safe_load(dump_config(self._config, self._profiles))
        return self._document
