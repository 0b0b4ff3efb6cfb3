"""The kube adapter imports kubernetes_asyncio without its generated models, which stay
reachable for anything that asks for them later."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def _run(code: str) -> str:
    # A fresh interpreter: this test process may have imported kubernetes_asyncio whole already.
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return done.stdout.strip()


def test_the_adapter_leaves_the_generated_models_unimported() -> None:
    out = _run(
        """
        import sys
        import scheduler.cluster.kube
        print(any(m.startswith("kubernetes_asyncio.client.models.") for m in sys.modules))
        """
    )
    assert out == "False"


def test_models_and_apis_are_still_there_for_whoever_asks() -> None:
    out = _run(
        """
        import scheduler.cluster.kube
        from kubernetes_asyncio.client import CoreV1Api, V1Pod
        import kubernetes_asyncio
        from kubernetes_asyncio.client.models import V1Node
        names = (V1Pod.__name__, V1Node.__name__, CoreV1Api.__name__)
        print(*names, bool(kubernetes_asyncio.__version__))
        """
    )
    assert out == "V1Pod V1Node CoreV1Api True"


def test_a_name_the_package_does_not_have_is_still_an_attribute_error() -> None:
    out = _run(
        """
        import scheduler.cluster.kube
        import kubernetes_asyncio.client as client
        try:
            client.NoSuchThing
        except AttributeError as error:
            print("AttributeError", "NoSuchThing" in str(error))
        """
    )
    assert out == "AttributeError True"
