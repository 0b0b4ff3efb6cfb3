"""Pod (anti-)affinity terms: selectors, the namespaces they cover, and label keys taken from
the pod itself."""

from __future__ import annotations

from scheduler.objects.pod_affinity import parse_affinity_term
from scheduler.objects.pod_affinity import parse_pod_affinity

WEB = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "zone"}


def test_a_term_without_namespaces_covers_the_pods_own_namespace() -> None:
    term = parse_affinity_term(WEB, "shop", {})
    assert term.namespaces == frozenset({"shop"}) and term.topology_key == "zone"
    assert term.matches_pod("shop", {"app": "web"}, None)
    assert not term.matches_pod("other", {"app": "web"}, None)
    assert not term.matches_pod("shop", {"app": "db"}, None)


def test_named_namespaces_replace_the_pods_own() -> None:
    term = parse_affinity_term({**WEB, "namespaces": ["a", "b"]}, "shop", {})
    assert term.matches_namespace("b", None) and not term.matches_namespace("shop", None)


def test_an_empty_namespace_selector_covers_every_namespace() -> None:
    term = parse_affinity_term({**WEB, "namespaceSelector": {}}, "shop", {})
    assert term.matches_namespace("anything", None)


def test_a_namespace_selector_needs_the_namespaces_labels() -> None:
    raw = {**WEB, "namespaceSelector": {"matchLabels": {"team": "x"}}}
    term = parse_affinity_term(raw, "shop", {})
    assert term.matches_namespace("other", {"team": "x"})
    assert not term.matches_namespace("other", {"team": "y"})
    assert not term.matches_namespace("other", None)


def test_a_term_without_a_label_selector_matches_no_pod() -> None:
    term = parse_affinity_term({"topologyKey": "zone"}, "shop", {})
    assert term.selector is None and not term.matches_pod("shop", {}, None)


def test_match_and_mismatch_label_keys_use_the_pods_own_values() -> None:
    raw = {**WEB, "matchLabelKeys": ["version", "absent"], "mismatchLabelKeys": ["owner"]}
    term = parse_affinity_term(raw, "shop", {"version": "v2", "owner": "me"})
    assert term.matches_pod("shop", {"app": "web", "version": "v2", "owner": "you"}, None)
    assert not term.matches_pod("shop", {"app": "web", "version": "v1", "owner": "you"}, None)
    assert not term.matches_pod("shop", {"app": "web", "version": "v2", "owner": "me"}, None)


def test_affinity_with_no_terms_reads_as_none() -> None:
    assert parse_pod_affinity(None, "ns", {}) is None
    assert (
        parse_pod_affinity({"requiredDuringSchedulingIgnoredDuringExecution": []}, "ns", {}) is None
    )
    affinity = parse_pod_affinity(
        {
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 3, "podAffinityTerm": WEB}
            ]
        },
        "ns",
        {},
    )
    assert affinity is not None and not affinity.empty
    assert [w.weight for w in affinity.preferred] == [3] and affinity.required == ()
