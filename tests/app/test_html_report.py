"""`simulate --output html FILE`: the page renders in headless Chromium with its charts, tables
and drill-down, and asks for nothing from anywhere."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduler.app.cli import main
from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.app.headless_chromium import headless_chromium

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
EXTERNAL = "http://example.invalid/pixel.png"
CSP_TAG_START = '<meta http-equiv="Content-Security-Policy"'


def _scenario() -> list[dict[str, Any]]:
    """A placed Deployment, a pod too big for any node, and a preemption."""
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {"name": "c", "image": "web", "resources": {"requests": {"cpu": "500m"}}}
                    ]
                },
            },
        },
    }
    return [
        make_node("node-a").capacity(cpu="2", memory="8Gi", pods=110).dict(),
        make_node("node-b").capacity(cpu="2", memory="8Gi", pods=110).dict(),
        make_node("small").capacity(cpu="1", memory="8Gi", pods=110).label("pool", "small").dict(),
        deployment,
        make_pod("filler").req(cpu="1").node("small").dict(),
        make_pod("urgent").req(cpu="1").priority(1000).node_selector(pool="small").dict(),
        make_pod("huge").req(cpu="64").dict(),
    ]


def _png_size(png: bytes) -> tuple[int, int]:
    assert png.startswith(PNG_SIGNATURE)
    width, height = struct.unpack(">II", png[16:24])
    return width, height


def _distinct_pixel_bytes(png: bytes) -> int:
    """How many different byte values the image data holds: a blank page has very few."""
    data, offset = b"", len(PNG_SIGNATURE)
    while offset < len(png):
        (length,) = struct.unpack(">I", png[offset : offset + 4])
        kind = png[offset + 4 : offset + 8]
        if kind == b"IDAT":
            data += png[offset + 8 : offset + 8 + length]
        offset += 12 + length
    return len(set(zlib.decompress(data)))


@pytest.fixture
def page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(yaml.safe_dump_all(_scenario()))
    out = tmp_path / "report.html"
    argv = [
        "simulate",
        "--no-progress",
        "--seed",
        "11",
        "--output",
        "html",
        str(out),
        str(scenario),
    ]
    assert main(argv) == 0
    assert "Preempted:" in capsys.readouterr().out
    return out


async def test_the_page_renders_its_charts_tables_and_drill_down(
    page: Path, tmp_path: Path
) -> None:
    async with headless_chromium() as browser:
        loaded, tab = await browser.load(page.as_uri())
        found = await browser.evaluate(
            tab,
            """({
                nodeBars: [...document.querySelectorAll('#node-bars g.node')]
                    .map(g => g.dataset.node),
                reasons: [...document.querySelectorAll('#reason-histogram g.reason text.label')]
                    .map(t => t.textContent),
                profiles: [...document.querySelectorAll('#profile-table tbody tr')]
                    .map(r => [r.dataset.profile, r.lastElementChild.textContent]),
                pods: [...document.querySelectorAll('#pod-table tr.pod')].map(r => r.dataset.key),
                statuses: Object.fromEntries([...document.querySelectorAll('#pod-table tr.pod')]
                    .map(r => [r.dataset.key, r.children[2].textContent])),
                detail: document.getElementById('pod-detail-name')?.textContent,
                detailPlugins: document.getElementById('pod-detail-plugins')?.textContent,
                detailReasons: [...document.querySelectorAll('#pod-detail-reasons li')]
                    .map(li => li.textContent),
            })""",
        )
        # The drill-down follows a click.
        await browser.evaluate(
            tab, "document.querySelector('tr.pod[data-key=\"default/urgent\"]').click()"
        )
        chosen = await browser.evaluate(tab, "document.getElementById('pod-detail').textContent")
    assert _png_size(loaded.screenshot) == (1280, 1600)
    assert _distinct_pixel_bytes(loaded.screenshot) > 40, "the screenshot is blank"
    assert found["nodeBars"] == ["node-a", "node-b", "small"]
    assert "Insufficient cpu" in found["reasons"]
    assert found["profiles"] == [["default-scheduler", "node-a, node-b, small"]]
    assert len(found["pods"]) == 6, "3 from the Deployment, filler (a victim), urgent, huge"
    assert found["statuses"]["default/filler"] == "Preempted"
    assert found["statuses"]["default/huge"] == "Unschedulable"
    # The script ran under the page's own policy: it chose the first pod not placed.
    assert found["detail"] == "default/huge"
    assert any("Insufficient cpu" in r for r in found["detailReasons"])
    assert found["detailPlugins"] == "Rejected by plugins: NodeResourcesFit"
    assert "Status: Scheduled" in chosen and "Node: small" in chosen
    assert loaded.requests == [page.as_uri()]


@pytest.fixture
def bare_and_control(page: Path, tmp_path: Path) -> tuple[Path, Path]:
    """The page without its policy (which would block a stray fetch silently, where without it
    any shows), and that page with one external image, to prove the check can fail."""
    text = page.read_text()
    assert CSP_TAG_START in text
    start = text.index(CSP_TAG_START)
    bare_text = text[:start] + text[text.index(">", start) + 1 :]
    bare = tmp_path / "bare.html"
    bare.write_text(bare_text)
    control = tmp_path / "control.html"
    control.write_text(bare_text.replace("</body>", f'<img src="{EXTERNAL}"></body>'))
    return bare, control


async def test_the_page_requests_nothing_even_without_its_policy(
    bare_and_control: tuple[Path, Path],
) -> None:
    bare, control = bare_and_control
    async with headless_chromium() as browser:
        loaded, _ = await browser.load(bare.as_uri())
        controlled, _ = await browser.load(control.as_uri())
    assert loaded.requests == [bare.as_uri()]
    assert controlled.requests == [control.as_uri(), EXTERNAL]
