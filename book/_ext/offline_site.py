"""Sphinx extension that makes the book's website work with no internet at all.

Loaded by ``_config.yml`` (``sphinx.local_extensions``). It

* serves the JavaScript the pages need from the site itself (``book/_static/vendored``, copied from
  the npm packages with their licences): MathJax through ``mathjax_path`` (set in ``_config.yml``),
  and, on pages that hold a bertviz view, d3, jQuery and require.js plus a small AMD shim that
  registers d3 and jQuery as modules, so that require.js never fetches bertviz's CDN copies;
* removes the ``<script src="https://cdnjs…/require.min.js">`` tag that bertviz stores in the notebook
  output (the page already loads require.js; loading it twice is useless, and offline it fails);
* writes each inline ``<script>`` once: Sphinx 7.4 adds inline scripts registered after the builder
  started (such as sphinx-thebe's ``const THEBE_JS_URL = …``) twice, and the second ``const``
  declaration is a page error ("Identifier 'THEBE_JS_URL' has already been declared").

The static folder is added when the builder starts (not listed in ``html_static_path`` of
``_config.yml``) because Jupyter Book injects every ``*.js`` found under the listed folders into
every page.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx

STATIC_DIR = Path(__file__).resolve().parents[1] / "_static"

# Loaded in this order after every other script of the page: d3 and jQuery must run before
# require.js exists (d3 would otherwise register itself as an anonymous AMD module, an error);
# the shim then names them "d3" and "jquery" for bertviz's require.js code.
BERTVIZ_SCRIPTS = [
    "vendored/d3/d3.min.js",
    "vendored/jquery/jquery.min.js",
    "vendored/requirejs/require.js",
    "bertviz-amd-shim.js",
]
CDN_REQUIRE_TAG = re.compile(
    r"<script[^>]*\bsrc=[\"']https://cdnjs\.cloudflare\.com/ajax/libs/require\.js/[^\"']*[\"'][^>]*>\s*</script>"
)
USES_REQUIRE = re.compile(r"\b(?:require\.config|requirejs)\s*\(")


def add_static_dir(app: Sphinx) -> None:
    """Ship ``book/_static`` with the site (copied to ``_build/html/_static``)."""
    if STATIC_DIR.is_dir() and str(STATIC_DIR) not in app.config.html_static_path:
        app.config.html_static_path.append(str(STATIC_DIR))


def serve_bertviz_libraries(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """On a page with require.js code (bertviz views), load the local libraries instead of the CDN's."""
    body = context.get("body")
    if not isinstance(body, str) or not USES_REQUIRE.search(body):
        return
    context["body"] = CDN_REQUIRE_TAG.sub("", body)
    for priority, script in enumerate(BERTVIZ_SCRIPTS, start=900):
        app.add_js_file(script, priority=priority)


def write_each_script_once(
    app: Sphinx, pagename: str, templatename: str, context: dict[str, Any], doctree: Any
) -> None:
    """Drop repeated ``<script>`` entries (same file or same inline body) from the page."""
    scripts = context.get("script_files")
    if not isinstance(scripts, list):
        return
    seen: set[tuple[str, tuple[tuple[str, str], ...]]] = set()
    unique = []
    for script in scripts:
        filename = str(getattr(script, "filename", script) or "")
        attributes = getattr(script, "attributes", {}) or {}
        key = (filename, tuple(sorted((str(k), str(v)) for k, v in attributes.items())))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    scripts[:] = unique


def setup(app: Sphinx) -> dict[str, Any]:
    app.connect("builder-inited", add_static_dir)
    app.connect("html-page-context", serve_bertviz_libraries)
    # after every other handler has added its scripts
    app.connect("html-page-context", write_each_script_once, priority=999)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
