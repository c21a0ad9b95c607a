"""bertviz views drawn with no internet: attention_to_bert.figures.bertviz_offline.

bertviz's own output loads require.js, d3 and jQuery from a CDN, so offline it draws nothing. The
wrappers ship d3 and jQuery inside the output. Checked in headless Chromium with every request that
leaves the machine aborted: in a blank page (and bertviz's own output, as a control, draws nothing
there), and in a running JupyterLab that executes a notebook calling the wrappers.
"""

from __future__ import annotations

import os
import re
import secrets
import socket
import subprocess
import sys
import time
from urllib.request import urlopen

import bertviz
import nbformat
import pytest
import torch
from helpers import ROOT, is_local

from attention_to_bert.figures import bertviz_offline

pytestmark = pytest.mark.slow  # skipped by `pytest -m "not slow"`

TOKENS = ["[CLS]", "the", "cat", "sat", "[SEP]"]
ARTIFACTS = ROOT / "tests" / "artifacts" / "screenshots"
VIEW_TEXTS = 'div[id^="bertviz-"] #vis svg text'


def attention(layers: int = 2, heads: int = 12) -> list[torch.Tensor]:
    generator = torch.Generator().manual_seed(0)
    return [
        torch.randn(1, heads, len(TOKENS), len(TOKENS), generator=generator).softmax(-1)
        for _ in range(layers)
    ]


def offline_page(browser):
    """A page whose requests outside the machine are aborted; returns (context, page, errors, aborted)."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    aborted: list[str] = []

    def abort(route) -> None:
        aborted.append(route.request.url)
        route.abort("internetdisconnected")

    context.route(lambda url: not is_local(url), abort)
    page = context.new_page()
    errors: list[str] = []
    page.on(
        "console", lambda message: errors.append(message.text) if message.type == "error" else None
    )
    page.on("pageerror", lambda error: errors.append(str(error)))
    return context, page, errors, aborted


def test_the_output_loads_nothing_from_a_cdn_and_holds_rounded_weights():
    html = bertviz_offline.view_html(bertviz.head_view, attention(), TOKENS, decimals=3)
    assert "cdnjs" not in re.sub(r"require\.config\(\{.*?\}\);", "", html, flags=re.S)
    assert html.count("data-bertviz-libraries") == 1 and "<script src=" not in html
    numbers = re.findall(r"\d\.\d+", html.split("const params", 1)[1][:20_000])
    assert numbers and max(len(n.split(".")[1]) for n in numbers) <= 3
    full = bertviz_offline.view_html(bertviz.head_view, attention(), TOKENS, decimals=None)
    assert len(full) > len(html) + 2_000  # unrounded float32 weights print long expansions


def test_an_encoder_decoder_view_draws_its_three_kinds_of_attention(browser):
    """Chapter 6's form: encoder self-attention, decoder self-attention and cross-attention, each rounded."""
    source, target = ["a", "b", "c", "d", "e"], ["<bos>", "x", "y"]
    generator = torch.Generator().manual_seed(1)

    def weights(queries: int, keys: int) -> list[torch.Tensor]:
        return [torch.randn(1, 2, queries, keys, generator=generator).softmax(-1) for _ in range(2)]

    html = bertviz_offline.view_html(
        bertviz.head_view,
        encoder_attention=weights(5, 5),
        decoder_attention=weights(3, 3),
        cross_attention=weights(3, 5),
        encoder_tokens=source,
        decoder_tokens=target,
    )
    numbers = re.findall(r"\d\.\d+", html.split("const params", 1)[1][:20_000])
    assert numbers and max(len(n.split(".")[1]) for n in numbers) <= 3  # all three kinds rounded
    context, page, errors, aborted = offline_page(browser)
    try:
        page.set_content(f"<html><body>{html}</body></html>")
        page.locator(VIEW_TEXTS).first.wait_for(state="attached", timeout=10_000)
        assert set(source) <= set(page.locator(VIEW_TEXTS).all_text_contents())
        assert not errors and not aborted, (errors, aborted)
    finally:
        context.close()


def test_the_shipped_libraries_cannot_end_the_inline_script():
    script = bertviz_offline.libraries_script()
    assert script.count("</script") == 1 and "<!--" not in script
    for path in bertviz_offline.LIBRARIES.values():
        assert (bertviz_offline.JAVASCRIPT / path).stat().st_size > 50_000
    assert (bertviz_offline.JAVASCRIPT / "d3" / "LICENSE").read_text().strip()
    assert (bertviz_offline.JAVASCRIPT / "jquery" / "LICENSE.txt").read_text().strip()


@pytest.mark.parametrize("view", ["head_view", "model_view"])
def test_a_view_draws_in_a_blank_page_with_the_network_cut(browser, view):
    layers = attention()
    context, page, errors, aborted = offline_page(browser)
    try:
        # two views on one page, as in chapter 7: the second finds the libraries the first defined
        html = "".join(
            bertviz_offline.view_html(getattr(bertviz, view), layers, TOKENS) for _ in range(2)
        )
        page.set_content(f"<html><body>{html}</body></html>")
        assert page.locator('div[id^="bertviz-"] #vis svg').count() == 2
        page.locator(VIEW_TEXTS).first.wait_for(state="attached", timeout=10_000)
        texts = set(page.locator(VIEW_TEXTS).all_text_contents())
        expected = set(TOKENS) if view == "head_view" else {"Layers", "Heads", "0", "11"}
        assert expected <= texts, texts
        assert not errors and not aborted, (errors, aborted)

        # the control: bertviz's own output draws nothing where the CDN cannot be reached
        page.set_content(
            "<html><body>"
            + getattr(bertviz, view)(layers, TOKENS, html_action="return").data
            + "</body></html>"
        )
        page.wait_for_timeout(1_000)
        assert page.locator(VIEW_TEXTS).count() == 0
        assert any("cdnjs.cloudflare.com" in url for url in aborted)
    finally:
        context.close()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def jupyterlab(tmp_path):
    """JupyterLab on 127.0.0.1 serving tmp_path, its kernels able to import the book's package."""
    pytest.importorskip("jupyterlab")
    token, port = secrets.token_hex(16), _free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            filter(None, [str(ROOT / "book"), os.environ.get("PYTHONPATH")])
        ),
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces"),
    }
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    log = tmp_path / "jupyterlab.log"
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ServerApp.ip=127.0.0.1",
         f"--ServerApp.token={token}", f"--ServerApp.root_dir={notebooks}", "--LabApp.news_url=",
         "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate", "--LabApp.extension_manager=readonly",
         "--allow-root"],
        env=env, stdout=log.open("w"), stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}/"
    try:
        for _ in range(120):
            try:
                urlopen(f"{url}api/status?token={token}", timeout=1).close()
                break
            except OSError:
                assert server.poll() is None, "jupyter lab exited"
                time.sleep(0.5)
        yield notebooks, url, token, log
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_views_draw_in_jupyterlab_with_no_internet(browser, jupyterlab):
    notebooks, url, token, log = jupyterlab
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    notebook.cells = [
        nbformat.v4.new_code_cell(
            "import torch\nfrom attention_to_bert.figures import bertviz_offline\n"
            "torch.manual_seed(0)\n"
            f"tokens = {TOKENS!r}\n"
            "layers = [torch.randn(1, 4, 5, 5).softmax(-1) for _ in range(2)]\n"
            "bertviz_offline.head_view(layers, tokens)"
        ),
        nbformat.v4.new_code_cell("bertviz_offline.model_view(layers, tokens)"),
    ]
    nbformat.write(notebook, notebooks / "views.ipynb")
    context, page, errors, aborted = offline_page(browser)
    try:
        page.goto(f"{url}lab/tree/views.ipynb?token={token}", wait_until="load", timeout=120_000)
        editors = page.locator(".jp-Notebook .jp-Cell .cm-content")
        editors.first.wait_for(timeout=120_000)
        page.locator('[data-status="idle"]').first.wait_for(timeout=120_000)  # the kernel is ready
        views = page.locator('.jp-OutputArea div[id^="bertviz-"]')
        prompts = page.locator(".jp-Notebook .jp-Cell .jp-InputPrompt")
        drawn = page.locator('.jp-OutputArea div[id^="bertviz-"] #vis svg')
        for number in (1, 2):  # run the cells one at a time, each until its view has drawn
            deadline, asked = time.monotonic() + 240, 0.0
            while drawn.count() < number and time.monotonic() < deadline:
                # a slow machine's first kernel can time out and be replaced: JupyterLab then asks which
                # kernel to use, and a request sent meanwhile is lost; so accept, and ask again
                select = page.locator(".jp-Dialog button.jp-mod-accept")
                if select.count() and select.first.is_visible():
                    select.first.click()
                not_running = "*" not in prompts.nth(number - 1).inner_text()
                if not_running and time.monotonic() - asked > 15:
                    editors.nth(number - 1).click()
                    page.keyboard.press("Shift+Enter")
                    asked = time.monotonic()
                page.wait_for_timeout(1_000)
            if drawn.count() < number:
                ARTIFACTS.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(ARTIFACTS / "jupyterlab-bertviz.png"))
                outputs = page.locator(".jp-OutputArea-output").all_inner_texts()
                pytest.fail(
                    f"view {number} did not draw in JupyterLab; outputs {outputs}, console {errors}, "
                    f"server log:\n{log.read_text()[-3000:]}"
                )
        assert views.count() == 2
        head_texts = views.nth(0).locator("#vis svg text").all_text_contents()
        model_texts = views.nth(1).locator("#vis svg text").all_text_contents()
        assert set(TOKENS) <= set(head_texts), head_texts
        assert {"Layers", "Heads", "0", "3"} <= set(model_texts), model_texts
        view_errors = [e for e in errors if re.search(r"bertviz|d3|jquery|require", e, re.I)]
        assert not view_errors, view_errors
    finally:
        context.close()


def test_print_gets_a_static_picture_of_the_same_attention(monkeypatch):
    # the website shows the HTML view; the PDF (no JavaScript) takes the PNG of the same weights
    import base64

    shown = []
    monkeypatch.setattr(bertviz_offline, "display", lambda bundle, raw: shown.append(bundle))
    torch.manual_seed(0)
    attention = [torch.softmax(torch.randn(1, 4, 5, 5), -1) for _ in range(3)]
    bertviz_offline.model_view(attention, list("abcde"), include_layers=[0, 2], include_heads=[1])
    (bundle,) = shown
    assert set(bundle) == {"text/html", "image/png", "text/plain"}
    png = base64.b64decode(bundle["image/png"])
    assert png.startswith(b"\x89PNG") and len(png) > 2_000


def test_the_picture_can_show_fewer_layers_than_the_view(monkeypatch):
    import base64

    shown = []
    monkeypatch.setattr(bertviz_offline, "display", lambda bundle, raw: shown.append(bundle))
    torch.manual_seed(0)
    attention = [torch.softmax(torch.randn(1, 2, 4, 4), -1) for _ in range(2)]
    bertviz_offline.head_view(attention, list("abcd"))
    bertviz_offline.head_view(attention, list("abcd"), picture_layers=[1])
    everything, last = (base64.b64decode(bundle["image/png"]) for bundle in shown)
    assert last.startswith(b"\x89PNG") and last != everything
    # the interactive view still holds both layers (its weights, rounded, are in the HTML)
    assert all(bundle["text/html"].count("[[[") >= 2 for bundle in shown)


def test_the_picture_can_show_fewer_heads_than_the_view(monkeypatch):
    import base64
    import io

    from PIL import Image

    shown = []
    monkeypatch.setattr(bertviz_offline, "display", lambda bundle, raw: shown.append(bundle))
    torch.manual_seed(0)
    attention = [torch.softmax(torch.randn(1, 6, 4, 4), -1) for _ in range(2)]
    bertviz_offline.head_view(attention, list("abcd"), picture_layers=[0])
    bertviz_offline.head_view(attention, list("abcd"), picture_layers=[0], picture_heads=[1, 4])
    every_head, two_heads = (
        Image.open(io.BytesIO(base64.b64decode(bundle["image/png"]))) for bundle in shown
    )
    # one row either way: six panels against two, of the same size, so a third of the width or so
    assert two_heads.height == every_head.height
    assert two_heads.width < every_head.width / 2
    # the interactive view still holds all six heads of both layers
    assert all(bundle["text/html"].count("[[[") >= 2 for bundle in shown)
