/* The book's movable figures (attention_to_bert.figures.interactive): plain SVG and JavaScript, no library,
 * no network. Each figure is a <div class="atb-figure" data-figure="query|scaling"> whose JSON
 * configuration sits in a <script type="application/json"> inside it; this file draws every figure
 * on the page that is not drawn yet, so it may be loaded once per output. The static picture inside
 * the div (for readers without JavaScript) is hidden once the live figure is drawn.
 * Colours: the book's roles (query orange, keys blue, values green, weights purple). MIT licence, part of the book's helper package. */
(function () {
  "use strict";
  var SVG = "http://www.w3.org/2000/svg";
  var COLOURS = {key: "#1f5fa8", value: "#23803a", query: "#c85a00", output: "#222222",
                 bar: "#6f3596", text: "#222222"};  // the book's: keys blue, values green, weights purple

  function el(name, attributes, parent) {
    var node = document.createElementNS(SVG, name);
    Object.keys(attributes || {}).forEach(function (k) { node.setAttribute(k, attributes[k]); });
    if (parent) { parent.appendChild(node); }
    return node;
  }

  function html(name, attributes, parent, text) {
    var node = document.createElement(name);
    Object.keys(attributes || {}).forEach(function (k) { node.setAttribute(k, attributes[k]); });
    if (text !== undefined) { node.textContent = text; }
    if (parent) { parent.appendChild(node); }
    return node;
  }

  function softmax(scores) {
    var top = Math.max.apply(null, scores);
    var exps = scores.map(function (s) { return Math.exp(s - top); });
    var total = exps.reduce(function (a, b) { return a + b; }, 0);
    return exps.map(function (e) { return e / total; });
  }

  // The score of query q against key k, as attention_to_bert.figures.interactive.score_function does.
  function score(name, q, k) {
    var dot = 0, distance = 0;
    for (var i = 0; i < q.length; i++) {
      dot += q[i] * k[i];
      distance += (q[i] - k[i]) * (q[i] - k[i]);
    }
    if (name === "dot") { return dot; }
    if (name === "scaled_dot") { return dot / Math.sqrt(q.length); }
    return -0.5 * distance;  // "negative_distance": -||q - k||^2 / 2
  }

  // A seeded generator (mulberry32) and normal draws (Box-Muller), the same as the Python twin.
  function generator(seed) {
    var state = seed >>> 0;
    function uniform() {
      state = (state + 0x6D2B79F5) >>> 0;
      var t = state;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    }
    return function normal() {
      var u = 1 - uniform(), v = uniform();
      return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
    };
  }

  function controlRow(parent) {
    return html("div", {"class": "atb-controls",
      style: "display:flex;flex-wrap:wrap;gap:0.4em 1.2em;align-items:center;margin:0.3em 0;"}, parent);
  }

  function barChart(svg, x0, y0, width, rowHeight, labels) {
    var bars = labels.map(function (label, i) {
      var y = y0 + i * rowHeight;
      el("text", {x: x0, y: y + rowHeight * 0.65, "font-size": 13, fill: COLOURS.text}, svg)
        .textContent = label;
      el("rect", {x: x0 + 44, y: y + 3, width: width, height: rowHeight - 6, fill: "#eeeeee"}, svg);
      var bar = el("rect", {x: x0 + 44, y: y + 3, width: 0, height: rowHeight - 6,
                            fill: COLOURS.bar, "class": "atb-bar", "data-key": label}, svg);
      var value = el("text", {x: x0 + 50 + width, y: y + rowHeight * 0.65, "font-size": 13,
                              fill: COLOURS.text, "class": "atb-weight"}, svg);
      return {bar: bar, value: value};
    });
    return function update(weights) {
      weights.forEach(function (w, i) {
        bars[i].bar.setAttribute("width", (w * width).toFixed(2));
        bars[i].bar.setAttribute("data-weight", String(w));
        bars[i].value.textContent = w.toFixed(3);
      });
    };
  }

  // ------------------------------------------------------------------------------------------
  // "Drag the query": keys and values as points in 2-D, a query moved by mouse, touch or keys.
  function drawQuery(root, config) {
    var lo = config.domain[0], hi = config.domain[1];
    var size = 300, pad = 28, plot = size - 2 * pad;
    var n = config.keys.length, rowHeight = 26, barWidth = 150;
    var query = config.query.slice();
    var state = {score: config.score, temperature: config.temperature};

    var controls = controlRow(root);
    var scoreLabel = html("label", {}, controls, "score ");
    var select = html("select", {"class": "atb-score"}, scoreLabel);
    [["dot", "dot q·k"], ["scaled_dot", "scaled dot q·k/√d"],
     ["negative_distance", "negative distance −½‖q−k‖²"]].forEach(function (o) {
      var option = html("option", {value: o[0]}, select, o[1]);
      if (o[0] === state.score) { option.selected = true; }
    });
    var tLabel = html("label", {}, controls, "temperature ");
    var temperature = html("input", {type: "range", min: "0.1", max: "3", step: "0.1",
      value: String(state.temperature), "class": "atb-temperature"}, tLabel);
    var tValue = html("output", {"class": "atb-temperature-value"}, tLabel,
                      " " + state.temperature.toFixed(1));

    // side by side where the column is wide enough for 12-unit text to show at 9.5 px or more;
    // on a phone the bars go below the plot (one column: the text shows larger, not smaller)
    var wide = size + 70 + barWidth + 60;
    var stacked = (root.getBoundingClientRect().width || wide) < wide * 9.5 / 12;
    var width = stacked ? size : wide;
    var height = stacked ? size + n * rowHeight + 30 : Math.max(size, n * rowHeight + 40);
    var svg = el("svg", {viewBox: "0 0 " + width + " " + height,
      width: "100%", role: "group", "aria-label": config.title,
      style: "max-width:" + width + "px;touch-action:pan-x pan-y pinch-zoom;user-select:none;"}, root);
    function px(p) { return [pad + (p[0] - lo) / (hi - lo) * plot, pad + (hi - p[1]) / (hi - lo) * plot]; }
    function data(x, y) {
      var clamp = function (v) { return Math.min(hi, Math.max(lo, v)); };
      return [clamp(lo + (x - pad) / plot * (hi - lo)), clamp(hi - (y - pad) / plot * (hi - lo))];
    }
    var area = el("rect", {x: pad, y: pad, width: plot, height: plot, fill: "#fafafa",
                           stroke: "#999999", "class": "atb-plot"}, svg);
    var origin = px([0, 0]);
    el("line", {x1: pad, x2: pad + plot, y1: origin[1], y2: origin[1], stroke: "#cccccc"}, svg);
    el("line", {x1: origin[0], x2: origin[0], y1: pad, y2: pad + plot, stroke: "#cccccc"}, svg);
    var links = config.keys.map(function () {
      return el("line", {stroke: COLOURS.query, "stroke-opacity": 0.5}, svg);
    });
    config.values.forEach(function (v) {
      var p = px(v);
      el("rect", {x: p[0] - 4, y: p[1] - 4, width: 8, height: 8, fill: "none",
                  stroke: COLOURS.value, "stroke-width": 2, transform: "rotate(45 " + p[0] + " " + p[1] + ")"}, svg);
    });
    config.keys.forEach(function (k, i) {
      var p = px(k);
      el("circle", {cx: p[0], cy: p[1], r: 6, fill: COLOURS.key}, svg);
      el("text", {x: p[0] + 8, y: p[1] - 8, "font-size": 13, fill: COLOURS.text}, svg)
        .textContent = config.labels[i];
    });
    var output = el("path", {d: "M-7,0H7M0,-7V7", stroke: COLOURS.output, "stroke-width": 3,
                             "class": "atb-output"}, svg);
    var handle = el("circle", {r: 9, fill: COLOURS.query, stroke: "#ffffff", "stroke-width": 2,
      tabindex: "0", role: "button", "class": "atb-query", style: "cursor:grab;touch-action:none;",
      "aria-label": "query point: drag it, or focus it and use the arrow keys"}, svg);
    el("text", {x: pad, y: size - 6, "font-size": 12, fill: COLOURS.text}, svg).textContent =
      "● keys   ◇ values   ● query (drag)   + output";
    var update = stacked ? barChart(svg, 10, size + 10, barWidth, rowHeight, config.labels)
                         : barChart(svg, size + 40, 20, barWidth, rowHeight, config.labels);
    var readout = html("p", {"class": "atb-readout", "aria-live": "polite",
                             style: "margin:0.2em 0;font-size:0.9em;"}, root);

    function redraw() {
      var scores = config.keys.map(function (k) { return score(state.score, query, k) / state.temperature; });
      var weights = softmax(scores);
      var out = [0, 0];
      weights.forEach(function (w, i) { out[0] += w * config.values[i][0]; out[1] += w * config.values[i][1]; });
      var q = px(query), o = px(out);
      handle.setAttribute("cx", q[0]);
      handle.setAttribute("cy", q[1]);
      root.parentNode.setAttribute("data-query", query[0] + "," + query[1]);
      output.setAttribute("transform", "translate(" + o[0] + "," + o[1] + ")");
      links.forEach(function (line, i) {
        var k = px(config.keys[i]);
        line.setAttribute("x1", q[0]); line.setAttribute("y1", q[1]);
        line.setAttribute("x2", k[0]); line.setAttribute("y2", k[1]);
        line.setAttribute("stroke-width", (0.5 + 6 * weights[i]).toFixed(2));
      });
      update(weights);
      var best = weights.indexOf(Math.max.apply(null, weights));
      readout.textContent = "query (" + query[0].toFixed(2) + ", " + query[1].toFixed(2) +
        "): most weight on " + config.labels[best] + " (" + weights[best].toFixed(3) + ")";
    }

    function moveTo(event) {
      var point = svg.createSVGPoint();
      point.x = event.clientX; point.y = event.clientY;
      var local = point.matrixTransform(svg.getScreenCTM().inverse());
      query = data(local.x, local.y);
      redraw();
    }
    var dragging = false;
    handle.addEventListener("pointerdown", function (event) {
      dragging = true; handle.setPointerCapture(event.pointerId); event.preventDefault();
    });
    // a finger on the figure scrolls the page unless it grabs the handle (touch-action above); a
    // tap on the plot moves the query there, as a mouse press does at once
    area.addEventListener("pointerdown", function (event) {
      if (event.pointerType !== "touch") { moveTo(event); }
    });
    area.addEventListener("click", function (event) { moveTo(event); });
    // Chromium ignores touch-action inside an SVG: a finger on the handle must not scroll
    handle.addEventListener("touchstart", function (event) { event.preventDefault(); },
                            {passive: false});
    handle.addEventListener("pointermove", function (event) { if (dragging) { moveTo(event); } });
    handle.addEventListener("pointerup", function () { dragging = false; });
    handle.addEventListener("pointercancel", function () { dragging = false; });
    handle.addEventListener("keydown", function (event) {
      var step = (hi - lo) / 50, moves = {ArrowLeft: [-step, 0], ArrowRight: [step, 0],
                                          ArrowUp: [0, step], ArrowDown: [0, -step]};
      if (!moves[event.key]) { return; }
      query = [Math.min(hi, Math.max(lo, query[0] + moves[event.key][0])),
               Math.min(hi, Math.max(lo, query[1] + moves[event.key][1]))];
      event.preventDefault();
      redraw();
    });
    select.addEventListener("change", function () { state.score = select.value; redraw(); });
    temperature.addEventListener("input", function () {
      state.temperature = parseFloat(temperature.value);
      tValue.textContent = " " + state.temperature.toFixed(1);
      redraw();
    });
    redraw();
  }

  // ------------------------------------------------------------------------------------------
  // "Slide √d_k": one query over ten random keys, the scores divided by √d_k (left) and not
  // divided (right), side by side; unscaled, the spread of the scores grows like √d_k and the
  // softmax saturates.
  function drawScaling(root, config) {
    var sizes = config.sizes, n = config.num_keys, maxSize = sizes[sizes.length - 1];
    var state = {index: config.start_index, seed: config.seed};
    var q, keys, upstream;
    function draw() {
      var normal = generator(state.seed);
      q = []; keys = []; upstream = [];
      for (var i = 0; i < maxSize; i++) { q.push(normal()); }
      for (var j = 0; j < n; j++) {
        var k = [];
        for (var d = 0; d < maxSize; d++) { k.push(normal()); }
        keys.push(k);
      }
      for (var u = 0; u < n; u++) { upstream.push(normal()); }
    }
    var controls = controlRow(root);
    var sLabel = html("label", {}, controls, "d_k ");
    var slider = html("input", {type: "range", min: "0", max: String(sizes.length - 1), step: "1",
      value: String(state.index), "class": "atb-dk"}, sLabel);
    var sValue = html("output", {"class": "atb-dk-value"}, sLabel);
    var button = html("button", {type: "button", "class": "atb-redraw"}, controls,
                      "new random q and k");

    var rowHeight = 24, barWidth = 200;
    var labels = [];
    for (var i = 0; i < n; i++) { labels.push("k" + (i + 1)); }
    var row = html("div", {style: "display:flex;flex-wrap:wrap;gap:0.5em 1.5em;"}, root);
    var panels = [true, false].map(function (scaled) {
      var name = scaled ? "scaled" : "unscaled";
      var box = html("div", {"class": "atb-panel", style: "flex:1 1 300px;max-width:360px;"}, row);
      html("p", {style: "margin:0.2em 0;font-weight:bold;"}, box,
           scaled ? "q·k / √d_k (divided)" : "q·k (not divided)");
      var svg = el("svg", {viewBox: "0 0 320 " + (n * rowHeight + 24), width: "100%", role: "img",
        "aria-label": config.title + ": " + (scaled ? "divided by √d_k" : "not divided")}, box);
      var update = barChart(svg, 6, 4, barWidth, rowHeight, labels);
      svg.querySelectorAll("rect.atb-bar").forEach(function (bar) {
        bar.setAttribute("data-panel", name);
      });
      var uniformX = 6 + 44 + barWidth / n;
      el("line", {x1: uniformX, x2: uniformX, y1: 0, y2: n * rowHeight + 6, stroke: "#000000",
                  "stroke-dasharray": "3 3"}, svg);
      el("text", {x: uniformX + 3, y: n * rowHeight + 20, "font-size": 12, fill: COLOURS.text}, svg)
        .textContent = "uniform 1/" + n;
      var readout = html("p", {"class": "atb-readout", "aria-live": "polite",
                               style: "margin:0.2em 0;font-size:0.9em;"}, box);
      return {scaled: scaled, name: name, update: update, readout: readout};
    });

    function redraw() {
      var size = sizes[state.index];
      sValue.textContent = " " + size;
      slider.setAttribute("aria-valuetext", "d_k = " + size);
      panels.forEach(function (panel) {
        var divisor = panel.scaled ? Math.sqrt(size) : 1;
        var scores = keys.map(function (k) {
          var dot = 0;
          for (var d = 0; d < size; d++) { dot += q[d] * k[d]; }
          return dot / divisor;
        });
        var average = scores.reduce(function (a, b) { return a + b; }, 0) / n;
        var spread = Math.sqrt(scores.reduce(function (acc, s) {
          return acc + (s - average) * (s - average);
        }, 0) / n);  // the standard deviation of the scores over the keys
        var weights = softmax(scores);
        var mean = 0;
        weights.forEach(function (w, j) { mean += w * upstream[j]; });
        // gradient at the scores of sum_j w_j u_j: w_j (u_j - sum_i w_i u_i)
        var gradient = Math.sqrt(weights.reduce(function (acc, w, j) {
          var g = w * (upstream[j] - mean); return acc + g * g;
        }, 0));
        var largest = Math.max.apply(null, weights);
        panel.update(weights);
        var suffix = panel.scaled ? "" : "-unscaled";
        root.parentNode.setAttribute("data-largest" + suffix, String(largest));
        root.parentNode.setAttribute("data-gradient" + suffix, String(gradient));
        root.parentNode.setAttribute("data-spread" + suffix, String(spread));
        panel.readout.textContent = "spread of the scores " + spread.toFixed(2) +
          " · largest weight " + largest.toFixed(3) + " · gradient at the scores " +
          gradient.toFixed(3);
      });
    }
    slider.addEventListener("input", function () { state.index = parseInt(slider.value, 10); redraw(); });
    button.addEventListener("click", function () { state.seed += 1; draw(); redraw(); });
    draw();
    redraw();
  }

  var FIGURES = {query: drawQuery, scaling: drawScaling};
  document.querySelectorAll("div.atb-figure:not([data-drawn])").forEach(function (root) {
    var config = JSON.parse(root.querySelector("script[type='application/json']").textContent);
    root.setAttribute("data-drawn", "1");
    var fallback = root.querySelector(".atb-static");
    if (fallback) { fallback.style.display = "none"; }
    var live = document.createElement("div");
    live.className = "atb-live";
    root.appendChild(live);
    FIGURES[root.getAttribute("data-figure")](live, config);
  });
})();
