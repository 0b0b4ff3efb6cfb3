"""Shared test inputs."""

from pathlib import Path

DATA = Path(__file__).resolve().parent
MULTI_PROFILE = (DATA / "multi_profile.yaml").read_text()
