"""KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1): load, default, validate, dump.

`load_config_*` and `default_config` return the defaulted configuration and one
EffectiveProfile per profile: the plugins each extension point runs, in order, with resolved
Score weights, and the validated args of every plugin. Any problem raises ConfigError with one
"<field.path>: <what is wrong>" line per problem.
"""

from scheduler.config.documents import load_yaml_documents, read_text
from scheduler.config.dump import dump_config
from scheduler.config.durations import format_duration, parse_duration
from scheduler.config.effective import EffectiveProfile
from scheduler.config.loader import (
    default_config,
    load_config_dict,
    load_config_file,
    load_config_text,
)
from scheduler.config.models import (
    API_VERSION,
    KIND,
    ClientConnectionConfiguration,
    Extender,
    ExtenderManagedResource,
    ExtenderTLSConfig,
    KubeSchedulerConfiguration,
    KubeSchedulerProfile,
    LeaderElectionConfiguration,
    Plugin,
    PluginConfig,
    Plugins,
    PluginSet,
)
from scheduler.config.plugin_sets import EXTENSION_POINTS, PluginRef
from scheduler.framework.errors import ConfigError

__all__ = [
    "API_VERSION",
    "EXTENSION_POINTS",
    "KIND",
    "ClientConnectionConfiguration",
    "ConfigError",
    "EffectiveProfile",
    "Extender",
    "ExtenderManagedResource",
    "ExtenderTLSConfig",
    "KubeSchedulerConfiguration",
    "KubeSchedulerProfile",
    "LeaderElectionConfiguration",
    "Plugin",
    "PluginConfig",
    "PluginRef",
    "PluginSet",
    "Plugins",
    "default_config",
    "dump_config",
    "format_duration",
    "load_config_dict",
    "load_config_file",
    "load_config_text",
    "load_yaml_documents",
    "parse_duration",
    "read_text",
]
