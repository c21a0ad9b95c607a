"""The figures a reader can move (attention_to_bert.figures.interactive).

Fast: the HTML is self-contained (no URL is fetched), deterministic, carries a static picture, and
bad arguments are named. Slow (Chromium): the query is dragged with the mouse and moved with the keys,
and the weights drawn agree with ``attention()`` at that position within 1e-3; the d_k slider makes the
largest weight rise when the scaling is off; the first state equals the Python twin's numbers; axe
finds no violation; every request that leaves the page is refused.
"""

from __future__ import annotations

import re
from importlib import resources

import pytest
import torch

from attention_to_bert.figures import interactive

KEYS = [[-1.5, 1.0], [1.2, 1.4], [0.3, -1.2], [-0.8, -0.4], [1.6, -0.5], [0.0, 0.6]]
LABELS = ["cat", "dog", "car", "bus", "sun", "tree"]


def query_html(**kwargs) -> str:
    return interactive.query_figure_html(KEYS, LABELS, query=(0.5, 0.5), **kwargs)


def test_figures_are_self_contained_and_deterministic():
    for page in (query_html(), interactive.scaling_figure_html()):
        # the only URL is SVG's namespace name, which is never fetched
        urls = set(re.findall(r"https?://[^\s\"')]+", page))
        assert urls <= {"http://www.w3.org/2000/svg"}, urls
        assert 'class="atb-static"' in page and "data:image/png;base64," in page
        assert "<script src" not in page
    assert query_html() == query_html()
    assert interactive.scaling_figure_html() == interactive.scaling_figure_html()
    assert query_html() != query_html(score="dot")


def test_query_weights_are_attention_with_the_named_score():
    query = torch.tensor([[0.5, 0.5]], dtype=torch.float64)
    keys = torch.tensor(KEYS, dtype=torch.float64)
    expected = torch.softmax((keys @ query.T).squeeze(-1) / 2**0.5 / 0.5, dim=0)
    got = interactive.query_weights(KEYS, [0.5, 0.5], "scaled_dot", temperature=0.5)
    torch.testing.assert_close(got, expected.unsqueeze(0)[0])
    distance = interactive.query_weights(KEYS, [0.5, 0.5], "negative_distance")
    assert distance.argmax().item() == 5  # "tree" at (0, 0.6) is the nearest key


def test_negative_distance_is_the_chapters_half_squared_distance():
    # chapter 1: q . k = -|q - k|^2 / 2 + |k|^2 / 2 + |q|^2 / 2, so the distance score is the dot
    # product without its length bonus; at q on k6 ("tree") the distance puts the most weight there
    query = torch.tensor([[0.0, 0.6]], dtype=torch.float64)
    keys = torch.tensor(KEYS, dtype=torch.float64)
    half_squared = -0.5 * ((query - keys) ** 2).sum(dim=-1)
    torch.testing.assert_close(interactive.negative_distance_score(query, keys)[0], half_squared)
    weights = interactive.query_weights(KEYS, [0.0, 0.6], "negative_distance")
    torch.testing.assert_close(weights, torch.softmax(half_squared, dim=0))
    assert weights.argmax().item() == 5
    # the scaled dot product at the same place prefers the long key k2 ("dog"), as the text says
    scaled = interactive.query_weights(KEYS, [0.0, 0.6], "scaled_dot")
    assert scaled.argmax().item() == 1 and round(scaled[1].item(), 3) == 0.263
    assert round(scaled[5].item(), 3) == 0.187


def test_the_figure_colours_are_the_books_roles():
    script = resources.files("attention_to_bert.figures").joinpath("javascript/figures.js")
    line = re.search(r"var COLOURS = \{(.*?)\};", script.read_text(encoding="utf-8"), re.S).group(1)
    colours = dict(re.findall(r"(\w+): \"(#[0-9a-fA-F]{6})\"", line))
    book = interactive.FIGURE_COLOURS
    assert colours["query"] == book["query"] and colours["key"] == book["key"]
    assert colours["value"] == book["value"] and colours["bar"] == book["weight"]
    assert "negative distance −½‖q−k‖²" in script.read_text(encoding="utf-8")


def test_scaling_draw_reproduces_javascript_mulberry32():
    # numbers printed by Node for generator(1) in figures.js (first three of q, first of upstream)
    query, keys, upstream = interactive.scaling_draw(10, 1)
    assert query[:3].tolist() == [1.4043387784152637, 1.2157546192705377, -0.5103768768108126]
    assert keys[0, :2].tolist() == [1.1152836974537146, -0.5062444934068945]
    assert upstream[0].item() == 1.185274073383766
    _, unscaled, _ = interactive.scaling_statistics(10, 1, 512, scaled=False)
    _, scaled, _ = interactive.scaling_statistics(10, 1, 512, scaled=True)
    assert unscaled > 0.9 > scaled


def test_scaling_spread_grows_like_sqrt_dk_unless_divided():
    # the spread of the scores over the keys: about sqrt(d_k) unscaled, about 1 divided
    for size in (16, 64, 256, 512):
        unscaled = interactive.scaling_spread(10, 1, size, scaled=False)
        scaled = interactive.scaling_spread(10, 1, size, scaled=True)
        assert scaled == pytest.approx(unscaled / size**0.5, rel=1e-12)
        assert 0.4 < scaled < 2.0, (size, scaled)
    with pytest.raises(ValueError, match="size"):
        interactive.scaling_spread(10, 1, 600, scaled=True)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"score": "cosine"}, ValueError, "score must be one of"),
        ({"temperature": 0}, ValueError, "temperature must be a finite number > 0"),
        ({"values": [[0, 0]]}, ValueError, "values must have the keys' shape"),
        ({"domain": (1, -1)}, ValueError, "low < high"),
        ({"domain": (0.0, 1.0)}, ValueError, "every key must lie inside domain"),
    ],
)
def test_bad_query_figure_arguments_are_named(kwargs, error, message):
    with pytest.raises(error, match=message):
        query_html(**kwargs)


def test_bad_points_and_labels_are_named():
    with pytest.raises(ValueError, match=r"keys must have shape \(n, 2\)"):
        interactive.query_figure_html([[1, 2, 3]], ["a"])
    with pytest.raises(TypeError, match="keys must be numbers"):
        interactive.query_figure_html("abc", ["a"])
    with pytest.raises(ValueError, match="labels must be a list of 6"):
        interactive.query_figure_html(KEYS, LABELS[:2])
    with pytest.raises(ValueError, match="start_size must be one of"):
        interactive.scaling_figure_html(start_size=3)
    with pytest.raises(ValueError, match="num_keys must be >= 2"):
        interactive.scaling_figure_html(num_keys=1)


# ---------------------------------------------------------------------------------------------------
# In Chromium, with every outside request refused


@pytest.fixture
def open_figure(browser, tmp_path):
    contexts = []

    def open_(figure_html: str):
        path = tmp_path / "figure.html"
        path.write_text(
            '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>figure</title>'
            f"</head><body><main><h1>A figure</h1>{figure_html}</main></body></html>"
        )
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        refused = []
        context.route(
            lambda url: not url.startswith(("file:", "data:", "about:")),
            lambda route: (refused.append(route.request.url), route.abort()),
        )
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.goto(path.as_uri())
        page.wait_for_selector("div.atb-figure[data-drawn]")
        contexts.append(context)
        return page, errors, refused

    yield open_
    for context in contexts:
        context.close()


def drawn_weights(page) -> list[float]:
    return page.eval_on_selector_all(
        "rect.atb-bar", "bars => bars.map(b => parseFloat(b.getAttribute('data-weight')))"
    )


def drawn_query(page) -> list[float]:
    return [float(x) for x in page.get_attribute("div.atb-figure", "data-query").split(",")]


@pytest.mark.slow
def test_dragging_the_query_moves_the_weights_as_attention_computes(open_figure):
    page, errors, refused = open_figure(query_html())
    assert page.is_hidden("img.atb-static"), "the static picture gives way to the live figure"
    start = drawn_query(page)
    torch.testing.assert_close(
        torch.tensor(drawn_weights(page), dtype=torch.float64),
        interactive.query_weights(KEYS, start, "scaled_dot"),
        atol=1e-3,
        rtol=0,
    )
    # drag the query with the mouse to the point drawn for data (-1, -0.5)
    target = page.evaluate(
        """() => {
        const svg = document.querySelector('div.atb-figure svg');
        const plot = svg.querySelector('rect.atb-plot').getBBox();
        const x = plot.x + (-1 + 2) / 4 * plot.width, y = plot.y + (2 - -0.5) / 4 * plot.height;
        const point = svg.createSVGPoint(); point.x = x; point.y = y;
        const screen = point.matrixTransform(svg.getScreenCTM());
        return [screen.x, screen.y];
    }"""
    )
    handle = page.locator("circle.atb-query").bounding_box()
    page.mouse.move(handle["x"] + handle["width"] / 2, handle["y"] + handle["height"] / 2)
    page.mouse.down()
    page.mouse.move(*target, steps=8)
    page.mouse.up()
    moved = drawn_query(page)
    assert moved == pytest.approx([-1.0, -0.5], abs=0.05)
    expected = interactive.query_weights(KEYS, moved, "scaled_dot")
    torch.testing.assert_close(
        torch.tensor(drawn_weights(page), dtype=torch.float64), expected, atol=1e-3, rtol=0
    )
    # another score and temperature, then the keyboard
    page.select_option("select.atb-score", "negative_distance")
    page.fill("input.atb-temperature", "0.5")
    page.dispatch_event("input.atb-temperature", "input")
    page.focus("circle.atb-query")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowUp")
    stepped = drawn_query(page)
    assert stepped == pytest.approx([moved[0] + 0.08, moved[1] + 0.08], abs=1e-9)
    expected = interactive.query_weights(KEYS, stepped, "negative_distance", temperature=0.5)
    torch.testing.assert_close(
        torch.tensor(drawn_weights(page), dtype=torch.float64), expected, atol=1e-3, rtol=0
    )
    assert errors == [] and refused == []


@pytest.mark.slow
def test_the_dk_slider_saturates_the_softmax_when_not_scaled(open_figure):
    page, errors, refused = open_figure(interactive.scaling_figure_html(num_keys=10, seed=1))

    def read(name: str) -> float:
        return float(page.get_attribute("div.atb-figure", name))

    def set_size(size: int) -> None:
        page.fill("input.atb-dk", str(interactive.SCALING_SIZES.index(size)))
        page.dispatch_event("input.atb-dk", "input")

    def panel_weights(panel: str) -> torch.Tensor:
        bars = page.eval_on_selector_all(
            f'rect.atb-bar[data-panel="{panel}"]',
            "bars => bars.map(b => parseFloat(b.getAttribute('data-weight')))",
        )
        return torch.tensor(bars, dtype=torch.float64)

    # the first state is the Python twin's (d_k = 64), both panels side by side
    for scaled, panel, suffix in ((True, "scaled", ""), (False, "unscaled", "-unscaled")):
        weights, expected_largest, gradient = interactive.scaling_statistics(10, 1, 64, scaled)
        torch.testing.assert_close(panel_weights(panel), weights, atol=1e-6, rtol=0)
        assert read("data-largest" + suffix) == pytest.approx(expected_largest, abs=1e-6)
        assert read("data-gradient" + suffix) == pytest.approx(gradient, abs=1e-6)
        spread = interactive.scaling_spread(10, 1, 64, scaled)
        assert read("data-spread" + suffix) == pytest.approx(spread, abs=1e-6)
    set_size(1)
    small = read("data-largest-unscaled")
    set_size(512)
    big = read("data-largest-unscaled")
    assert big > small and big > 0.9, (small, big)
    assert big == pytest.approx(interactive.scaling_statistics(10, 1, 512, False)[1], abs=1e-6)
    assert read("data-largest") < 0.5  # the divided panel stays spread out
    # the spread of the unscaled scores is about sqrt(d_k); divided, about 1
    assert 0.5 * 512**0.5 < read("data-spread-unscaled") < 2 * 512**0.5
    assert 0.5 < read("data-spread") < 2
    page.click("button.atb-redraw")
    assert read("data-largest") != pytest.approx(
        interactive.scaling_statistics(10, 1, 512, True)[1]
    )
    assert errors == [] and refused == []


@pytest.mark.slow
def test_the_figures_pass_axe(open_figure):
    from axe_playwright_python.sync_playwright import Axe

    for figure in (query_html(), interactive.scaling_figure_html()):
        page, errors, _ = open_figure(figure)
        results = Axe().run(page)
        violations = [v["id"] for v in results.response["violations"]]
        assert violations == [], results.generate_report()
        assert errors == []
