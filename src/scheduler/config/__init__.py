"""KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1): load, default, validate, dump.

`load_config_*` and `default_config` return the defaulted configuration and one
EffectiveProfile per profile: the plugins each extension point runs, in order, with resolved
Score weights, and the validated args of every plugin. Any problem raises ConfigError with one
"<field.path>: <what is wrong>" line per problem.
"""

from scheduler.config.documents import load_yaml_documents
from scheduler.config.documents import read_text
from scheduler.config.dump import dump_config
from scheduler.config.durations import format_duration
from scheduler.config.durations import parse_duration
from scheduler.config.effective import EffectiveProfile
from scheduler.config.loader import default_config
from scheduler.config.loader import load_config_dict
from scheduler.config.loader import load_config_file
from scheduler.config.loader import load_config_text
from scheduler.config.models import API_VERSION
from scheduler.config.models import KIND
from scheduler.config.models import ClientConnectionConfiguration
from scheduler.config.models import Extender
from scheduler.config.models import ExtenderManagedResource
from scheduler.config.models import ExtenderTLSConfig
from scheduler.config.models import KubeSchedulerConfiguration
from scheduler.config.models import KubeSchedulerProfile
from scheduler.config.models import LeaderElectionConfiguration
from scheduler.config.models import Plugin
from scheduler.config.models import PluginConfig
from scheduler.config.models import Plugins
from scheduler.config.models import PluginSet
from scheduler.config.plugin_sets import EXTENSION_POINTS
from scheduler.config.plugin_sets import PluginRef
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
