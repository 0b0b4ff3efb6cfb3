"""Names the workload controllers give what they create: random suffixes and template hashes."""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from typing import Any

# The alphabet of generated-name suffixes and template hashes: no vowels (so no words are
# spelt by chance) and no characters that are easily confused.
SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_SUFFIX_LENGTH = 5
_FNV_OFFSET = 0x811C9DC5
_FNV_PRIME = 0x01000193


class GeneratedNames:
    """Names from a generateName prefix: the prefix and five random characters, drawn again
    when taken (the API server refuses a taken name and the controller retries)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self._taken: set[str] = set()

    def take(self, name: str) -> None:
        self._taken.add(name)

    def generate(self, prefix: str) -> str:
        while True:
            name = prefix + "".join(self.rng.choice(SAFE_ALPHABET) for _ in range(_SUFFIX_LENGTH))
            if name not in self._taken:
                self._taken.add(name)
                return name


def template_hash(template: Mapping[str, Any]) -> str:
    """A short, stable hash of a pod template, in the form of pod-template-hash and
    controller-revision-hash values: a 32-bit FNV-1a digest, its decimal digits mapped onto the
    safe alphabet. Equal templates hash alike; the digest is over canonical JSON, so the value
    is not byte-for-byte the one a real controller would compute."""
    digest = _FNV_OFFSET
    for byte in json.dumps(template, sort_keys=True, separators=(",", ":")).encode():
        digest = ((digest ^ byte) * _FNV_PRIME) & 0xFFFFFFFF
    return "".join(SAFE_ALPHABET[ord(c) % len(SAFE_ALPHABET)] for c in str(digest))
