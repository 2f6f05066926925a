/* ecocompute dashboard: draws the dataset embedded in index.html (no network). State lives in the URL hash. */
"use strict";
(function () {
  performance.mark("app-start");
  const DATA = JSON.parse(document.getElementById("ecocompute-data").textContent);
  performance.mark("json-parsed");
  const META = DATA.meta;
  const NAMES = DATA.names;

  // ---- data ---------------------------------------------------------------------------------------------
  // Rows as plain objects of one shape, built by a generated constructor (fast and monomorphic).
  function decode(table) {
    const names = Object.keys(table.columns);
    const cols = names.map(function (k) { return table.columns[k]; });
    const body = names.map(function (k, j) {
      const c = cols[j];
      const value = c && c.levels ? "(c[" + j + "].codes[i] < 0 ? null : c[" + j + "].levels[c[" + j + "].codes[i]])"
        : "c[" + j + "][i]";
      return JSON.stringify(k) + ": " + value;
    }).join(", ");
    const make = new Function("c", "i", "return {" + body + "};");
    const rows = new Array(table.n);
    for (let i = 0; i < table.n; i++) rows[i] = make(cols, i);
    return rows;
  }
  const M = decode(DATA.measurements);
  const decoded = {};  // changes and crossovers are decoded when a view first needs them
  function lazyRows(name) { return decoded[name] || (decoded[name] = decode(DATA[name])); }

  // analysis/defaults.py PRECISION_ORDER (tests/site holds them together)
  const PRECISIONS = ["fp16", "bf16", "fp8-wo", "fp8-dyn", "int8", "int8-t0", "nf4", "nf4-dq", "fp4", "q8_0", "q4_k_m"];
  const PRECISION_LABEL = {
    fp16: "FP16", bf16: "BF16", "fp8-wo": "FP8, weight-only", "fp8-dyn": "FP8, dynamic activations",
    int8: "INT8 (threshold 6.0)", "int8-t0": "INT8 (threshold 0.0)", nf4: "NF4", "nf4-dq": "NF4, double quant",
    fp4: "FP4", q8_0: "GGUF Q8_0", q4_k_m: "GGUF Q4_K_M",
  };
  const COLOURS = {
    fp16: "#4e79a7", bf16: "#76b7b2", "fp8-wo": "#b6992d", "fp8-dyn": "#d37295", int8: "#e15759",
    "int8-t0": "#f28e2b", nf4: "#59a14f", "nf4-dq": "#b07aa1", fp4: "#9c755f", q8_0: "#ff9da7",
    q4_k_m: "#499894",
  };
  function colour(p) { return COLOURS[p] || "#7f7f7f"; }
  function precisionRank(p) { const i = PRECISIONS.indexOf(p); return i < 0 ? PRECISIONS.length : i; }

  const DIMS = [
    { key: "gpu", label: "GPU" },
    { key: "engine", label: "Engine" },
    { key: "stack", label: "Software stack" },
    { key: "batch", label: "Batch size" },
    { key: "precision", label: "Precision" },
    { key: "weights", label: "Weights" },
  ];
  const VIEWS = [
    { key: "change", label: "Change vs FP16" },
    { key: "pareto", label: "Energy vs throughput" },
    { key: "quality", label: "Quality" },
    { key: "cost", label: "Cost & carbon" },
    { key: "table", label: "Measurements" },
    { key: "rejections", label: "Rejections" },
    { key: "cite", label: "Cite" },
  ];
  const DEFAULTS = DATA.defaults;

  function distinct(rows, key) {
    const seen = new Set();
    rows.forEach(function (r) { if (r[key] !== null && r[key] !== undefined) seen.add(String(r[key])); });
    const values = Array.from(seen);
    if (key === "precision") return values.sort(function (a, b) { return precisionRank(a) - precisionRank(b) || (a < b ? -1 : 1); });
    if (key === "batch") return values.sort(function (a, b) { return Number(a) - Number(b); });
    return values.sort();
  }
  performance.mark("decoded");
  const VALUES = {};
  const COUNTS = { gate: {}, all: {} };  // rows per filter value in each tier, taken once
  DIMS.forEach(function (d) {
    VALUES[d.key] = distinct(M, d.key);
    const gate = COUNTS.gate[d.key] = {}, all = COUNTS.all[d.key] = {};
    M.forEach(function (r) {
      const v = String(r[d.key]);
      all[v] = (all[v] || 0) + 1;
      if (r.in_gate_tier) gate[v] = (gate[v] || 0) + 1;
    });
  });

  // ---- state in the URL hash -----------------------------------------------------------------------------
  const state = {};
  function readState() {
    const p = new URLSearchParams(location.hash.replace(/^#/, ""));
    state.view = VIEWS.some(function (v) { return v.key === p.get("view"); }) ? p.get("view") : "change";
    DIMS.forEach(function (d) {
      state[d.key] = p.has(d.key) ? p.get(d.key).split(",").filter(function (v) { return v !== ""; }) : null;
    });
    state.tier = p.get("tier") === "all" ? "all" : "gate";
    state.front = p.get("front") === "all" ? "all" : "model";
    state.usd = numberOr(p.get("usd"), DEFAULTS.usd_per_gpu_hour.value);
    state.grid = numberOr(p.get("grid"), DEFAULTS.grid_g_per_kwh.value);
    state.pue = numberOr(p.get("pue"), DEFAULTS.pue.value);
  }
  function numberOr(text, fallback) {
    if (text === null || text === "") return fallback;
    const v = Number(text);
    return Number.isFinite(v) ? v : fallback;
  }
  function writeState() {
    const p = new URLSearchParams();
    p.set("view", state.view);
    DIMS.forEach(function (d) { if (state[d.key] !== null) p.set(d.key, state[d.key].join(",")); });
    if (state.tier !== "gate") p.set("tier", state.tier);
    if (state.front !== "model") p.set("front", state.front);
    if (state.usd !== DEFAULTS.usd_per_gpu_hour.value && state.usd !== null) p.set("usd", String(state.usd));
    if (state.grid !== DEFAULTS.grid_g_per_kwh.value) p.set("grid", String(state.grid));
    if (state.pue !== DEFAULTS.pue.value) p.set("pue", String(state.pue));
    const hash = "#" + p.toString().replace(/%2C/g, ",");
    if (location.hash !== hash) history.replaceState(null, "", hash);
  }
  function keep(r, withTier) {
    for (let i = 0; i < DIMS.length; i++) {
      const sel = state[DIMS[i].key];
      if (sel !== null && sel.indexOf(String(r[DIMS[i].key])) < 0) return false;
    }
    if (withTier === "row") return state.tier === "all" || r.in_gate_tier === true;
    if (withTier === "column") return r.tier === state.tier;
    return true;
  }
  function rows(kind) {
    if (kind === "measurements") return M.filter(function (r) { return keep(r, "row"); });
    if (kind === "changes") return lazyRows("changes").filter(function (r) { return keep(r, "row"); });
    return lazyRows("crossovers").filter(function (r) { return keep(r, "column"); });
  }

  // ---- small helpers -------------------------------------------------------------------------------------
  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "text") node.textContent = attrs[k];
      else if (k === "onclick" || k === "onchange" || k === "oninput") node[k] = attrs[k];
      else node.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) { node.appendChild(typeof c === "string" ? document.createTextNode(c) : c); });
    return node;
  }
  const fmt4 = d3.format(".4~g");
  function num(v, digits) {
    if (v === null || v === undefined || !Number.isFinite(v)) return "–";
    if (Math.abs(v) >= 1000) return d3.format(",.0f")(v);
    return digits === undefined ? fmt4(v) : d3.format("." + digits + "~g")(v);
  }
  function params(v) {
    if (v === null || v === undefined) return "n/a";
    if (v >= 1e10) return (v / 1e9).toFixed(1) + "B";
    if (v >= 1e9) return d3.format(".3~g")(v / 1e9) + "B";
    return d3.format(".3~g")(v / 1e6) + "M";
  }
  function shortModel(id) { return String(id).replace(/^random-init\//, "").replace(/^[^/]+\//, ""); }
  function tokens(r) { return (r.prompt_tokens === null ? "?" : r.prompt_tokens) + "+" + r.new_tokens; }
  function precisionLabel(p) { return PRECISION_LABEL[p] || p; }
  function config(base) { return state.tier === "all" && META.tiers ? base + "_all" : base; }

  function csvText(columns, data) {
    const esc = function (v) {
      if (v === null || v === undefined) return "";
      const s = String(v);
      return /[",\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
    };
    const lines = [columns.map(function (c) { return esc(c.name); }).join(",")];
    data.forEach(function (r) { lines.push(columns.map(function (c) { return esc(c.value(r)); }).join(",")); });
    return lines.join("\n") + "\n";
  }
  function datasetColumns(kind, keys) {  // CSV columns named as in the dataset's table
    return keys.filter(function (k) { return k in NAMES[kind]; }).map(function (k) {
      return { name: NAMES[kind][k] || k, value: function (r) { return r[k]; } };
    });
  }
  function download(name, type, text) {
    const a = el("a", { href: URL.createObjectURL(new Blob([text], { type: type })), download: name });
    document.body.appendChild(a);
    a.click();
    setTimeout(function () { URL.revokeObjectURL(a.href); a.remove(); }, 0);
  }
  function svgText(svg) {
    const copy = svg.cloneNode(true);
    copy.setAttribute("xmlns", "http://www.w3.org/2000/svg");
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + new XMLSerializer().serializeToString(copy);
  }
  function citationLine() {
    return "ecocompute dataset, version " + META.version + ", " + (META.doi ? "doi:" + META.doi : META.url);
  }
  function loadSnippet(lines) {
    return ["from datasets import load_dataset", ""].concat(lines).join("\n");
  }

  // One chart: title, the SVG, CSV and SVG downloads, the load_dataset snippet and the citation.
  function figure(id, title, svg, csv, snippet, caption) {
    const tools = el("div", { class: "tools" }, [
      el("button", { type: "button", "data-download": "svg", text: "Download SVG",
        onclick: function () { download(id + ".svg", "image/svg+xml", svgText(svg)); } }),
    ]);
    (Array.isArray(csv) ? csv : [csv]).forEach(function (c, i) {
      tools.insertBefore(el("button", { type: "button", "data-download": i === 0 ? "csv" : "csv-" + c.suffix,
        text: "Download CSV" + (c.label ? " (" + c.label + ")" : ""),
        onclick: function () { download(id + (i === 0 ? "" : "-" + c.suffix) + ".csv", "text/csv", c.text()); } }),
      tools.lastChild);
    });
    const details = el("details", {}, [el("summary", { text: "Load these data in Python, and cite them" }),
      el("pre", { class: "snippet", text: snippet }), el("pre", { class: "cite", text: META.bibtex || citationLine() })]);
    const children = [el("h2", { text: title })];
    if (caption) children.push(el("p", { class: "caption", text: caption }));
    children.push(svg, tools, details);
    return el("section", { class: "figure", id: "fig-" + id, "data-chart": id }, children);
  }

  function newSvg(width, height, title) {
    const svg = d3.create("svg").attr("viewBox", "0 0 " + width + " " + height).attr("width", width)
      .attr("height", height).attr("font-family", "system-ui, sans-serif").attr("font-size", 11);
    svg.append("rect").attr("width", width).attr("height", height).attr("fill", "#fff");
    svg.append("text").attr("x", 10).attr("y", 16).attr("font-size", 13).attr("font-weight", 600).text(title);
    svg.append("text").attr("x", width - 8).attr("y", height - 6).attr("text-anchor", "end").attr("fill", "#777")
      .attr("font-size", 9).text(citationLine());
    return svg;
  }
  function legend(svg, precisions, x, y) {
    const g = svg.append("g").attr("transform", "translate(" + x + "," + y + ")");
    precisions.forEach(function (p, i) {
      const item = g.append("g").attr("transform", "translate(0," + i * 15 + ")");
      item.append("rect").attr("width", 10).attr("height", 10).attr("fill", colour(p));
      item.append("text").attr("x", 14).attr("y", 9).text(precisionLabel(p));
    });
  }
  function escapeXml(text) {
    return String(text).replace(/[&<>"']/g, function (c) {
      return { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c];
    });
  }
  // Views with many charts or bars draw the first ones and a button for the rest (not part of the link).
  const CHART_LIMIT = 12;
  const DENSE_POINTS = 2000;
  const BAR_LIMIT = 60;
  const showAll = {};
  function moreButton(key, total, what) {
    return el("button", { type: "button", class: "more", "data-more": key, text: "Show all " + total + " " + what,
      onclick: function () { showAll[key] = true; update(); } });
  }
  function empty(text) { return el("p", { class: "empty", text: text }); }
  function groupBy(data, keyOf) {
    const map = new Map();
    data.forEach(function (r) { const k = keyOf(r); if (!map.has(k)) map.set(k, []); map.get(k).push(r); });
    return map;
  }

  // ---- view: change against FP16 over model size --------------------------------------------------------
  // a change is against its own engine's FP16: engines are never drawn, averaged or crossed in one chart
  const GROUP = ["gpu", "engine", "stack", "batch", "prompt_tokens", "new_tokens", "weights"];
  function groupKey(r) { return GROUP.map(function (k) { return r[k]; }).join("|"); }
  function groupTitle(r) {
    return r.gpu + " · " + r.engine + " · " + r.stack + " · batch " + r.batch + " · " + tokens(r) + " tokens · " +
      r.weights;
  }
  function sizeMeans(points) {
    const bySize = groupBy(points, function (r) { return r.params; });
    return Array.from(bySize.entries()).map(function (e) {
      const list = e[1];
      const mean = function (k) {
        const v = list.map(function (r) { return r[k]; }).filter(function (v) { return v !== null; });
        return v.length ? d3.mean(v) : null;
      };
      return { params: Number(e[0]), change: mean("change_pct"), low: mean("change_low"), high: mean("change_high") };
    }).sort(function (a, b) { return a.params - b.params; });
  }
  function changeChart(points, crossings, title) {
    const W = 700, H = 380, m = { l: 58, r: 150, t: 30, b: 48 };
    const svg = newSvg(W, H, title);
    const sizes = Array.from(new Set(points.map(function (r) { return r.params; }))).sort(d3.ascending);
    const xs = sizes.slice();
    crossings.forEach(function (c) {
      [c.crossover_params, c.crossover_low, c.crossover_high].forEach(function (v) { if (v !== null) xs.push(v); });
    });
    let lo = d3.min(xs), hi = d3.max(xs);
    lo = lo / 1.5; hi = hi * 1.5;
    const x = d3.scaleLog().domain([lo, hi]).range([m.l, W - m.r]).clamp(true);
    const ys = [0];
    points.forEach(function (r) { [r.change_pct, r.change_low, r.change_high].forEach(function (v) { if (v !== null) ys.push(v); }); });
    const y = d3.scaleLinear().domain(d3.extent(ys)).nice().range([H - m.b, m.t]);
    const plot = svg.append("g");
    const precisions = Array.from(new Set(points.map(function (r) { return r.precision; })))
      .sort(function (a, b) { return precisionRank(a) - precisionRank(b); });
    crossings.forEach(function (c) {
      if (c.crossover_low !== null && c.crossover_high !== null) {
        plot.append("rect").attr("class", "crossover-band").attr("data-precision", c.precision)
          .attr("x", x(c.crossover_low)).attr("width", Math.max(1, x(c.crossover_high) - x(c.crossover_low)))
          .attr("y", m.t).attr("height", H - m.b - m.t).attr("fill", colour(c.precision)).attr("opacity", 0.13);
      }
      if (c.crossover_params !== null) {
        plot.append("line").attr("class", "crossover").attr("data-precision", c.precision)
          .attr("x1", x(c.crossover_params)).attr("x2", x(c.crossover_params)).attr("y1", m.t).attr("y2", H - m.b)
          .attr("stroke", colour(c.precision)).attr("stroke-dasharray", "5,3");
      }
    });
    plot.append("line").attr("x1", m.l).attr("x2", W - m.r).attr("y1", y(0)).attr("y2", y(0)).attr("stroke", "#333");
    precisions.forEach(function (p) {
      const mine = points.filter(function (r) { return r.precision === p; });
      const means = sizeMeans(mine);
      const band = means.filter(function (s) { return s.low !== null && s.high !== null; });
      if (band.length > 1) {
        plot.append("path").attr("class", "ci-band").attr("data-precision", p).attr("fill", colour(p))
          .attr("opacity", 0.18).attr("d", d3.area().x(function (s) { return x(s.params); })
            .y0(function (s) { return y(s.low); }).y1(function (s) { return y(s.high); })(band));
      }
      if (means.length > 1) {
        plot.append("path").attr("fill", "none").attr("stroke", colour(p)).attr("stroke-width", 1.5)
          .attr("d", d3.line().x(function (s) { return x(s.params); }).y(function (s) { return y(s.change); })(means));
      }
      const markup = mine.map(function (r) {  // one string per point: thousands of points draw in one step
        const px = x(r.params).toFixed(2);
        const bar = r.change_low !== null && r.change_high !== null ? '<line x1="' + px + '" x2="' + px + '" y1="' +
          y(r.change_low).toFixed(2) + '" y2="' + y(r.change_high).toFixed(2) + '" stroke="' + colour(p) + '"/>' : "";
        return '<g class="point" data-precision="' + escapeXml(p) + '">' + bar + '<circle cx="' + px + '" cy="' +
          y(r.change_pct).toFixed(2) + '" r="3.5" fill="' + colour(p) + '"><title>' + escapeXml(shortModel(r.model) +
          " " + precisionLabel(p) + ": " + num(r.change_pct, 3) + "% [" + num(r.change_low, 3) + ", " +
          num(r.change_high, 3) + "] (" + r.submission_id + ")") + "</title></circle></g>";
      });
      plot.append("g").attr("class", "points").html(markup.join(""));
    });
    const ticks = [];
    sizes.forEach(function (s) { if (!ticks.length || x(s) - x(ticks[ticks.length - 1]) > 34) ticks.push(s); });
    svg.append("g").attr("transform", "translate(0," + (H - m.b) + ")")
      .call(d3.axisBottom(x).tickValues(ticks).tickFormat(params));
    svg.append("g").attr("transform", "translate(" + m.l + ",0)")
      .call(d3.axisLeft(y).ticks(6).tickFormat(function (v) { return v + "%"; }));
    svg.append("text").attr("x", (m.l + W - m.r) / 2).attr("y", H - 16).attr("text-anchor", "middle")
      .text("model size (parameters, log scale)");
    svg.append("text").attr("transform", "translate(14," + (H - m.b + m.t) / 2 + ") rotate(-90)")
      .attr("text-anchor", "middle").text("J/token change vs FP16 (95% CI)");
    legend(svg, precisions, W - m.r + 12, m.t + 4);
    return svg.node();
  }
  const CHANGE_KEYS = ["submission_id", "gpu", "engine", "stack", "batch", "prompt_tokens", "new_tokens", "weights", "model",
    "params", "precision", "baseline", "change_pct", "change_low", "change_high", "in_gate_tier"];
  const CROSS_KEYS = ["gpu", "engine", "stack", "batch", "prompt_tokens", "new_tokens", "precision", "weights", "status",
    "crossover_params", "crossover_low", "crossover_high", "params_min", "params_max", "message", "tier"];
  function viewChange(main) {
    const changes = rows("changes").filter(function (r) { return r.change_pct !== null; });
    const crossings = rows("crossovers");
    main.appendChild(el("p", { class: "caption", text: "Each point is one submission's change in energy per token " +
      "against its own FP16 (else BF16) measurement, with its 95% CI; the band is the CI across sizes; a dashed " +
      "line and a shaded band mark a crossover (the size where the precision stops costing energy) and its " +
      "bootstrap 95% CI. One chart per card × engine × software stack × batch × workload length × weights." }));
    if (!changes.length) { main.appendChild(empty("No change against FP16 in this selection.")); return; }
    const groups = Array.from(groupBy(changes, groupKey).values());
    const shown = showAll.change ? groups : groups.slice(0, CHART_LIMIT);
    let index = 0;
    shown.forEach(function (points) {
      index += 1;
      const first = points[0];
      const mine = crossings.filter(function (c) { return groupKey(c) === groupKey(first); });
      const drawn = new Set(points.map(function (r) { return r.precision; }));
      const crossingsDrawn = mine.filter(function (c) { return drawn.has(c.precision); });
      const title = groupTitle(first);
      const svg = changeChart(points, crossingsDrawn, title);
      const snippet = loadSnippet([
        'from ecocompute.analysis import change_vs_baseline, crossover',
        "",
        'm = load_dataset("' + META.hf_repo + '", "' + config("measurements") + '", split="train")',
        'w = load_dataset("' + META.hf_repo + '", "' + config("windows") + '", split="train")',
        "changes = change_vs_baseline(m)  # change_pct, ci95_low_pct, ci95_high_pct per submission x precision",
        "crossovers = crossover(m, w)  # crossover_params, ci95_low_params, ci95_high_params per group",
        "# this chart: " + NAMES.changes.gpu + "=" + JSON.stringify(first.gpu) + ", engine=" +
          JSON.stringify(first.engine) + ", " + NAMES.changes.stack + "=" +
          JSON.stringify(first.stack) + ", batch_size=" + first.batch + ", weights=" + JSON.stringify(first.weights),
      ]);
      const fig = figure("change-" + index, "Change vs FP16: " + title, svg, [
        { text: function () { return csvText(datasetColumns("changes", CHANGE_KEYS), points); } },
        { label: "crossovers", suffix: "crossovers",
          text: function () { return csvText(datasetColumns("crossovers", CROSS_KEYS), crossingsDrawn); } },
      ], snippet);
      const list = el("ul", { class: "crossovers" });
      crossingsDrawn.forEach(function (c) {
        list.appendChild(el("li", { "data-precision": c.precision, "data-status": c.status,
          text: precisionLabel(c.precision) + ": " + (c.message || c.status) }));
      });
      fig.insertBefore(list, fig.querySelector(".tools"));
      main.appendChild(fig);
    });
    if (shown.length < groups.length) main.appendChild(moreButton("change", groups.length, "charts"));
  }

  // ---- view: J/token against tokens/s with the Pareto front ---------------------------------------------
  function paretoFront(points) {  // lowest J/token for at least that throughput
    const sorted = points.slice().sort(function (a, b) { return b.tokens_per_s - a.tokens_per_s || a.j_per_token - b.j_per_token; });
    const front = [];
    let best = Infinity;
    sorted.forEach(function (r) { if (r.j_per_token < best) { front.push(r); best = r.j_per_token; } });
    return front.sort(function (a, b) { return a.tokens_per_s - b.tokens_per_s; });
  }
  const MEAS_KEYS = ["submission_id", "gpu", "engine", "stack", "batch", "prompt_tokens", "new_tokens", "model", "weights",
    "params", "precision", "n_windows", "j_per_token", "ci_low", "ci_high", "cv_pct", "tokens_per_s", "power_w",
    "wh_per_1k_tokens", "perplexity", "passes_cv_gate", "in_gate_tier", "error"];
  function viewPareto(main) {
    const points = rows("measurements").filter(function (r) { return r.j_per_token !== null && r.tokens_per_s !== null; });
    const perModel = state.front !== "all";
    main.appendChild(el("p", { class: "caption", text: "Energy per token (total GPU energy, idle included) against " +
      "throughput for every measurement in the selection. A line joins a Pareto front: no other measurement on it " +
      "is both faster and more frugal. " + (perModel ? "One front per model: which precision, engine, stack and " +
      "batch to pick for that model (J/token is absolute here, so engines share a front)." : "One front across every model in the selection.") }));
    const choice = el("div", { class: "inputs", "data-control": "front" });
    [["model", "a front per model"], ["all", "one front across models"]].forEach(function (f) {
      const radio = el("input", { type: "radio", name: "front", value: f[0] });
      radio.checked = (f[0] === "all") !== perModel;
      radio.onchange = function () { state.front = f[0]; update(); };
      choice.appendChild(el("label", {}, [radio, " " + f[1]]));
    });
    main.appendChild(choice);
    if (!points.length) { main.appendChild(empty("No measurement in this selection.")); return; }
    const fronts = perModel ? Array.from(groupBy(points, function (r) { return r.model; }).values()).map(paretoFront)
      : [paretoFront(points)];
    const front = [].concat.apply([], fronts);
    const onFront = new Set(front);
    const W = 760, H = 440, m = { l: 62, r: 150, t: 30, b: 48 };
    const svg = newSvg(W, H, "J/token against tokens/s, " + points.length + " measurements, " +
      (perModel ? "Pareto front per model" : "one Pareto front"));
    const x = d3.scaleLog().domain(d3.extent(points, function (r) { return r.tokens_per_s; })).nice().range([m.l, W - m.r]);
    const y = d3.scaleLog().domain(d3.extent(points, function (r) { return r.j_per_token; })).nice().range([H - m.b, m.t]);
    fronts.forEach(function (f) {
      svg.append("path").attr("class", "pareto-front").attr("fill", "none").attr("stroke", "#222")
        .attr("stroke-width", 1.2).attr("d", d3.line().curve(d3.curveStepBefore)
          .x(function (r) { return x(r.tokens_per_s); }).y(function (r) { return y(r.j_per_token); })(f));
    });
    const dense = points.length > DENSE_POINTS;  // one path per precision: no hover text, but fast
    if (dense) {
      groupBy(points, function (r) { return r.precision; }).forEach(function (list, precision) {
        svg.append("path").attr("class", "points-dense").attr("data-precision", precision).attr("data-count", list.length)
          .attr("fill", colour(precision)).attr("fill-opacity", 0.6).attr("d", list.map(function (r) {
            return "M" + (x(r.tokens_per_s) - 3).toFixed(1) + "," + y(r.j_per_token).toFixed(1) + "a3,3 0 1,0 6,0a3,3 0 1,0 -6,0";
          }).join(""));
      });
    }
    svg.append("g").html((dense ? front : points).map(function (r) {
      const front = onFront.has(r);
      return '<circle class="point" data-precision="' + escapeXml(r.precision) + '" cx="' +
        x(r.tokens_per_s).toFixed(2) + '" cy="' + y(r.j_per_token).toFixed(2) + '" r="' + (front ? 5 : 3.5) +
        '" fill="' + colour(r.precision) + '" stroke="' + (front ? "#000" : "none") + '" fill-opacity="0.85"><title>' +
        escapeXml(shortModel(r.model) + " " + precisionLabel(r.precision) + ", " + r.engine + ", " + r.stack + ", batch " +
          r.batch + ": " + num(r.j_per_token) + " J/token, " + num(r.tokens_per_s) + " tokens/s (" + r.submission_id + ")") +
        "</title></circle>";
    }).join(""));
    svg.append("g").attr("transform", "translate(0," + (H - m.b) + ")").call(d3.axisBottom(x).ticks(6, "~g"));
    svg.append("g").attr("transform", "translate(" + m.l + ",0)").call(d3.axisLeft(y).ticks(6, "~g"));
    svg.append("text").attr("x", (m.l + W - m.r) / 2).attr("y", H - 16).attr("text-anchor", "middle").text("tokens/s (log)");
    svg.append("text").attr("transform", "translate(14," + (H - m.b + m.t) / 2 + ") rotate(-90)")
      .attr("text-anchor", "middle").text("J/token (log)");
    legend(svg, distinct(points, "precision"), W - m.r + 12, m.t + 4);
    const cols = datasetColumns("measurements", MEAS_KEYS).concat([
      { name: "on_pareto_front", value: function (r) { return onFront.has(r); } },
      { name: "pareto_front_of", value: function () { return perModel ? "model_id" : "selection"; } }]);
    main.appendChild(figure("pareto", "Energy per token against throughput", svg.node(),
      { text: function () { return csvText(cols, points); } },
      loadSnippet(['m = load_dataset("' + META.hf_repo + '", "' + config("measurements") + '", split="train").to_polars()',
        'points = m.select("' + NAMES.measurements.tokens_per_s + '", "' + NAMES.measurements.j_per_token + '", "precision")'])));
  }

  // ---- view: quality beside energy ----------------------------------------------------------------------
  function viewQuality(main) {
    const all = rows("measurements");
    const measured = all.filter(function (r) { return r.perplexity !== null && r.j_per_token !== null; });
    main.appendChild(el("p", { class: "caption", text: "Perplexity (teacher-forced, on the collector's fixed text) " +
      "beside energy per token, where a submission measured it. The two are shown side by side and never folded " +
      "into one score: which trade-off is acceptable is the reader's call." }));
    if (!measured.length) {
      main.appendChild(empty("No measurement in this selection has a perplexity (" + all.length + " measurements; " +
        "random-init weights have none to measure)."));
      return;
    }
    const base = new Map();
    measured.forEach(function (r) { if (r.precision === "fp16" || (r.precision === "bf16" && !base.has(r.submission_id))) base.set(r.submission_id, r); });
    const W = 760, H = 420, m = { l: 62, r: 150, t: 30, b: 48 };
    const svg = newSvg(W, H, "Perplexity beside J/token, " + measured.length + " measurements");
    const x = d3.scaleLog().domain(d3.extent(measured, function (r) { return r.j_per_token; })).nice().range([m.l, W - m.r]);
    const y = d3.scaleLinear().domain(d3.extent(measured, function (r) { return r.perplexity; })).nice().range([H - m.b, m.t]);
    measured.forEach(function (r) {
      svg.append("circle").attr("class", "point").attr("data-precision", r.precision).attr("cx", x(r.j_per_token))
        .attr("cy", y(r.perplexity)).attr("r", 4).attr("fill", colour(r.precision))
        .append("title").text(shortModel(r.model) + " " + precisionLabel(r.precision) + ": perplexity " + num(r.perplexity) +
          ", " + num(r.j_per_token) + " J/token");
    });
    svg.append("g").attr("transform", "translate(0," + (H - m.b) + ")").call(d3.axisBottom(x).ticks(6, "~g"));
    svg.append("g").attr("transform", "translate(" + m.l + ",0)").call(d3.axisLeft(y).ticks(6));
    svg.append("text").attr("x", (m.l + W - m.r) / 2).attr("y", H - 16).attr("text-anchor", "middle").text("J/token (log)");
    svg.append("text").attr("transform", "translate(14," + (H - m.b + m.t) / 2 + ") rotate(-90)")
      .attr("text-anchor", "middle").text("perplexity");
    legend(svg, distinct(measured, "precision"), W - m.r + 12, m.t + 4);
    const cols = datasetColumns("measurements", MEAS_KEYS).concat([
      { name: "perplexity_change_pct", value: function (r) {
        const b = base.get(r.submission_id);
        return b && b !== r ? 100 * (r.perplexity / b.perplexity - 1) : null;
      } }]);
    main.appendChild(figure("quality", "Perplexity beside energy per token", svg.node(),
      { text: function () { return csvText(cols, measured); } },
      loadSnippet(['m = load_dataset("' + META.hf_repo + '", "' + config("measurements") + '", split="train").to_polars()',
        'quality = m.filter(m["perplexity"].is_not_null()).select("model_id", "precision", "' +
          NAMES.measurements.j_per_token + '", "perplexity")'])));
    main.appendChild(table(measured, [
      { name: "model", value: function (r) { return shortModel(r.model); }, text: true },
      { name: "precision", value: function (r) { return precisionLabel(r.precision); }, text: true },
      { name: "J/token", value: function (r) { return num(r.j_per_token); } },
      { name: "perplexity", value: function (r) { return num(r.perplexity); } },
      cols[cols.length - 1],
    ], 200));
  }

  // ---- view: cost and carbon ----------------------------------------------------------------------------
  function costRows(points) {
    const groups = groupBy(points, function (r) {
      return [r.gpu, r.engine, r.stack, r.batch, r.prompt_tokens, r.new_tokens, r.model, r.weights, r.precision].join("|");
    });
    return Array.from(groups.values()).map(function (list) {
      const r = list[0];
      const jpt = d3.mean(list, function (q) { return q.j_per_token; });
      const gpuHours = d3.mean(list, function (q) { return (q.gpu_count || 1) * 1e6 / (q.tokens_per_s * 3600); });
      const kwhGpu = jpt * 1e6 / 3.6e6;
      return {
        label: shortModel(r.model) + " · " + precisionLabel(r.precision) + " · " + r.engine + " · " + r.stack + " · b" +
          r.batch,
        gpu: r.gpu, engine: r.engine, stack: r.stack, batch: r.batch, prompt_tokens: r.prompt_tokens, new_tokens: r.new_tokens,
        model: r.model, weights: r.weights, precision: r.precision, params: r.params, n_submissions: list.length,
        j_per_token: jpt, gpu_hours_per_mtok: gpuHours,
        usd_per_mtok: state.usd === null ? null : gpuHours * state.usd,
        kwh_per_mtok_gpu: kwhGpu, kwh_per_mtok_facility: kwhGpu * state.pue,
        gco2e_per_mtok: kwhGpu * state.pue * state.grid,
      };
    }).sort(function (a, b) { return a.params - b.params || precisionRank(a.precision) - precisionRank(b.precision) ||
      (a.label < b.label ? -1 : 1); });
  }
  function barChart(data, value, title, unit) {
    const W = 780, rowH = 16, m = { l: 330, r: 70, t: 30, b: 40 };
    const H = m.t + m.b + rowH * data.length;
    const svg = newSvg(W, H, title);
    const x = d3.scaleLinear().domain([0, d3.max(data, value) || 1]).nice().range([m.l, W - m.r]);
    data.forEach(function (r, i) {
      const yy = m.t + i * rowH;
      svg.append("rect").attr("class", "bar").attr("data-precision", r.precision).attr("x", m.l).attr("y", yy + 2)
        .attr("width", Math.max(0, x(value(r)) - m.l)).attr("height", rowH - 4).attr("fill", colour(r.precision));
      svg.append("text").attr("x", m.l - 6).attr("y", yy + rowH - 4).attr("text-anchor", "end").text(r.label);
      svg.append("text").attr("x", x(value(r)) + 4).attr("y", yy + rowH - 4).text(num(value(r), 3));
    });
    svg.append("g").attr("transform", "translate(0," + (H - m.b) + ")").call(d3.axisBottom(x).ticks(6));
    svg.append("text").attr("x", (m.l + W - m.r) / 2).attr("y", H - 12).attr("text-anchor", "middle").text(unit);
    return svg.node();
  }
  function numberInput(id, label, value, onChange) {
    const input = el("input", { id: id, type: "number", step: "any", min: "0" });
    if (value !== null) input.value = String(value);
    input.onchange = function () { onChange(input.value === "" ? null : Number(input.value)); };
    return el("label", { for: id }, [label + " ", input]);
  }
  function source(d) {
    if (!d.source) return d.what;
    return d.value + " " + d.unit + ", " + d.what + " (" + d.source + ", " + d.url + ")";
  }
  const COST_KEYS = ["gpu", "engine", "stack", "batch", "prompt_tokens", "new_tokens", "model", "weights", "precision", "params"];
  function viewCost(main) {
    const points = rows("measurements").filter(function (r) { return r.j_per_token !== null && r.tokens_per_s; });
    main.appendChild(el("div", { class: "inputs" }, [
      numberInput("usd", "$ per GPU-hour", state.usd, function (v) { state.usd = v; update(); }),
      numberInput("grid", "grid gCO2e/kWh", state.grid, function (v) { state.grid = v === null ? DEFAULTS.grid_g_per_kwh.value : v; update(); }),
      numberInput("pue", "PUE", state.pue, function (v) { state.pue = v === null ? DEFAULTS.pue.value : v; update(); }),
    ]));
    main.appendChild(el("p", { class: "caption defaults", text: "Defaults: grid " + source(DEFAULTS.grid_g_per_kwh) +
      "; PUE " + source(DEFAULTS.pue) + "; price: " + DEFAULTS.usd_per_gpu_hour.what + "." }));
    main.appendChild(el("p", { class: "caption", text: "Per million generated tokens: GPU-hours = GPUs × 10⁶ / " +
      "(tokens/s × 3600); cost = GPU-hours × your price; energy = J/token × 10⁶ / 3.6×10⁶ kWh of GPU energy " +
      "(NVML: the card alone, no host, memory or network), × PUE for the facility; gCO2e = that × grid intensity. " +
      "Submissions of one configuration are averaged." }));
    if (!points.length) { main.appendChild(empty("No measurement in this selection.")); return; }
    const all = costRows(points);
    const data = showAll.cost ? all : all.slice(0, BAR_LIMIT);
    const cols = datasetColumns("measurements", COST_KEYS).concat(
      ["n_submissions", "j_per_token", "gpu_hours_per_mtok", "usd_per_mtok", "kwh_per_mtok_gpu",
        "kwh_per_mtok_facility", "gco2e_per_mtok"].map(function (k) { return { name: k, value: function (r) { return r[k]; } }; }),
      [{ name: "usd_per_gpu_hour", value: function () { return state.usd; } },
        { name: "grid_gco2e_per_kwh", value: function () { return state.grid; } },
        { name: "pue", value: function () { return state.pue; } }]);
    const csv = { text: function () { return csvText(cols, all); } };
    const snippet = loadSnippet([
      'm = load_dataset("' + META.hf_repo + '", "' + config("measurements") + '", split="train").to_polars()',
      "grid_g_per_kwh, pue, usd_per_gpu_hour = " + state.grid + ", " + state.pue + ", " + (state.usd === null ? "None" : state.usd),
      'kwh = m["' + NAMES.measurements.j_per_token + '"] * 1e6 / 3.6e6  # GPU energy per million tokens',
      "gco2e_per_mtok = kwh * pue * grid_g_per_kwh",
      'gpu_hours_per_mtok = 1e6 / (m["' + NAMES.measurements.tokens_per_s + '"] * 3600)  # times gpu_count (submissions)',
    ]);
    main.appendChild(figure("carbon", "gCO2e per million tokens", barChart(data, function (r) { return r.gco2e_per_mtok; },
      "gCO2e per million tokens (grid " + state.grid + " g/kWh, PUE " + state.pue + ")", "gCO2e per million tokens"), csv, snippet));
    const priced = state.usd !== null;
    main.appendChild(figure("cost", priced ? "Cost per million tokens" : "GPU-hours per million tokens",
      barChart(data, function (r) { return priced ? r.usd_per_mtok : r.gpu_hours_per_mtok; },
        priced ? "USD per million tokens at $" + state.usd + " per GPU-hour" : "GPU-hours per million tokens (set a price for cost)",
        priced ? "USD per million tokens" : "GPU-hours per million tokens"), csv, snippet,
      priced ? null : "Set a $ per GPU-hour above to see the cost; there is no default price."));
    if (data.length < all.length) {
      main.insertBefore(el("p", { class: "note", text: "The charts show the first " + data.length + " of " +
        all.length + " configurations; the CSV downloads hold them all." }), main.querySelector("#fig-carbon"));
      main.appendChild(moreButton("cost", all.length, "bars"));
    }
  }

  // ---- view: every measurement --------------------------------------------------------------------------
  function table(data, cols, pageSize) {
    const wrap = el("div", { class: "scroll" });
    let sortBy = null, ascending = true, limit = pageSize;
    function draw() {
      wrap.textContent = "";
      const sorted = sortBy === null ? data : data.slice().sort(function (a, b) {
        const va = sortBy.sort ? sortBy.sort(a) : sortBy.value(a), vb = sortBy.sort ? sortBy.sort(b) : sortBy.value(b);
        const c = va === vb ? 0 : va === null ? 1 : vb === null ? -1 : va < vb ? -1 : 1;
        return ascending ? c : -c;
      });
      const head = el("tr", {}, cols.map(function (c) {
        return el("th", { class: c.text ? "text" : "", text: c.name + (sortBy === c ? (ascending ? " ▲" : " ▼") : ""),
          onclick: function () { ascending = sortBy === c ? !ascending : true; sortBy = c; draw(); } });
      }));
      const body = el("tbody");
      sorted.slice(0, limit).forEach(function (r) {
        body.appendChild(el("tr", {}, cols.map(function (c) {
          const v = c.value(r);
          return el("td", { class: c.text ? "text" : "", text: v === null || v === undefined ? "–" : String(v) });
        })));
      });
      wrap.appendChild(el("table", { class: "data" }, [el("thead", {}, [head]), body]));
      if (sorted.length > limit) {
        wrap.appendChild(el("button", { type: "button", class: "more", text: "Show all " + sorted.length + " rows",
          onclick: function () { limit = Infinity; draw(); } }));
      }
    }
    draw();
    return wrap;
  }
  function viewTable(main) {
    const data = rows("measurements");
    main.appendChild(el("p", { class: "caption", text: data.length + " of " + M.length + " measurements. Tier: " +
      "'gate' = in the default configs (its submission passes the CV < 2% gate); 'all only' = accepted but for " +
      "its spread (in the *_all configs alone). 'CV < 2%' is the measurement's own passes_cv_gate; CV is the " +
      "windows' coefficient of variation of J/token." }));
    const cols = [
      { name: "submission", value: function (r) { return r.submission_id; }, text: true },
      { name: "model", value: function (r) { return shortModel(r.model); }, text: true },
      { name: "params", value: function (r) { return params(r.params); }, sort: function (r) { return r.params; } },
      { name: "precision", value: function (r) { return precisionLabel(r.precision); }, text: true },
      { name: "engine", value: function (r) { return r.engine; }, text: true },
      { name: "stack", value: function (r) { return r.stack; }, text: true },
      { name: "batch", value: function (r) { return r.batch; } },
      { name: "J/token", value: function (r) { return num(r.j_per_token); }, sort: function (r) { return r.j_per_token; } },
      { name: "CI low", value: function (r) { return num(r.ci_low); }, sort: function (r) { return r.ci_low; } },
      { name: "CI high", value: function (r) { return num(r.ci_high); }, sort: function (r) { return r.ci_high; } },
      { name: "CV %", value: function (r) { return num(r.cv_pct, 3); }, sort: function (r) { return r.cv_pct; } },
      { name: "tier", value: function (r) { return r.in_gate_tier ? "gate" : "all only"; }, text: true },
      { name: "CV < 2%", value: function (r) { return r.passes_cv_gate === null ? null : r.passes_cv_gate ? "yes" : "no"; }, text: true },
      { name: "windows", value: function (r) { return r.n_windows; } },
      { name: "tokens/s", value: function (r) { return num(r.tokens_per_s); }, sort: function (r) { return r.tokens_per_s; } },
      { name: "Wh/1k tokens", value: function (r) { return num(r.wh_per_1k_tokens); }, sort: function (r) { return r.wh_per_1k_tokens; } },
      { name: "W", value: function (r) { return num(r.power_w); }, sort: function (r) { return r.power_w; } },
      { name: "perplexity", value: function (r) { return num(r.perplexity); }, sort: function (r) { return r.perplexity; } },
      { name: "tokens", value: tokens },
      { name: "weights", value: function (r) { return r.weights; }, text: true },
      { name: "GPU", value: function (r) { return r.gpu; }, text: true },
      { name: "error", value: function (r) { return r.error; }, text: true },
    ];
    const section = el("section", { class: "figure", "data-chart": "measurements" }, [
      el("h2", { text: "Every measurement" }),
      el("div", { class: "tools" }, [el("button", { type: "button", "data-download": "csv", text: "Download CSV",
        onclick: function () { download("measurements.csv", "text/csv", csvText(datasetColumns("measurements", MEAS_KEYS), data)); } })]),
      el("details", {}, [el("summary", { text: "Load these data in Python, and cite them" }),
        el("pre", { class: "snippet", text: loadSnippet(['m = load_dataset("' + META.hf_repo + '", "' +
          config("measurements") + '", split="train")']) }),
        el("pre", { class: "cite", text: META.bibtex || citationLine() })]),
      table(data, cols, 200),
    ]);
    main.appendChild(section);
  }

  // ---- view: rejections ---------------------------------------------------------------------------------
  function viewRejections(main) {
    const list = DATA.rejections;
    main.appendChild(el("h2", { text: "Rejected submissions" }));
    if (!list || !list.length) {
      main.appendChild(el("p", { class: "empty", id: "no-rejections", text: "Rejected submissions in this build: none" +
        (list ? "." : " (the build published no rejections.json).") }));
      return;
    }
    main.appendChild(el("p", { class: "caption", text: list.length + " submission(s) the validator rejected, with " +
      "each error finding it gave. Codes are documented in docs/validator.md." }));
    const ul = el("ul", { class: "rejections" });
    list.forEach(function (item) {
      const li = el("li", {}, [el("strong", { text: item.submission }),
        item.submission_id && item.submission_id !== item.submission ? " (submission " + item.submission_id + ")" : ""]);
      item.findings.forEach(function (f) {
        li.appendChild(el("div", { class: "finding" }, [el("code", { text: f.code }),
          " " + f.message + (f.where ? " (" + f.where + ")" : "")]));
      });
      ul.appendChild(li);
    });
    main.appendChild(ul);
  }

  // ---- view: cite ---------------------------------------------------------------------------------------
  function viewCite(main) {
    main.appendChild(el("h2", { text: "Cite and load this dataset" }));
    main.appendChild(el("p", {}, ["Version " + META.version + ", ", el("a", { href: META.url, text: META.doi ? "doi:" + META.doi : META.url }), "."]));
    main.appendChild(el("pre", { class: "cite", text: META.bibtex || citationLine() }));
    main.appendChild(el("pre", { class: "snippet", text: loadSnippet(Object.keys(META.configs).map(function (k) {
      return k + ' = load_dataset("' + META.hf_repo + '", "' + META.configs[k] + '", split="train")';
    })) }));
  }

  // ---- frame: tabs, filters, redraw ---------------------------------------------------------------------
  const VIEW_FUNCS = { change: viewChange, pareto: viewPareto, quality: viewQuality, cost: viewCost, table: viewTable,
    rejections: viewRejections, cite: viewCite };
  function drawTabs() {
    const nav = document.getElementById("views");
    nav.textContent = "";
    VIEWS.forEach(function (v) {
      nav.appendChild(el("button", { type: "button", role: "tab", "data-view": v.key, text: v.label,
        "aria-selected": String(state.view === v.key), onclick: function () { state.view = v.key; update(); } }));
    });
  }
  function label(key, value) {
    if (key === "precision") return precisionLabel(value);
    if (key === "batch") return "batch " + value;
    return value;
  }
  function drawFilters() {
    const aside = document.getElementById("filters");
    aside.textContent = "";
    DIMS.forEach(function (d) {
      const fs = el("fieldset", { "data-filter": d.key }, [el("legend", { text: d.label })]);
      VALUES[d.key].forEach(function (value) {
        const box = el("input", { type: "checkbox", value: value, name: d.key });
        box.checked = state[d.key] === null || state[d.key].indexOf(value) >= 0;
        box.onchange = function () {
          const on = Array.from(fs.querySelectorAll("input:checked")).map(function (b) { return b.value; });
          state[d.key] = on.length === VALUES[d.key].length ? null : on;
          update();
        };
        const count = COUNTS[state.tier][d.key][value] || 0;
        fs.appendChild(el("label", {}, [box, " " + label(d.key, value) + " ", el("span", { class: "count", text: "(" + count + ")" })]));
      });
      aside.appendChild(fs);
    });
    const tiers = el("fieldset", { "data-filter": "tier" }, [el("legend", { text: "Tier" })]);
    [["gate", "passes the CV < 2% gate"], ["all", "every accepted measurement"]].forEach(function (t) {
      const radio = el("input", { type: "radio", name: "tier", value: t[0] });
      radio.checked = state.tier === t[0];
      radio.onchange = function () { state.tier = t[0]; update(); };
      tiers.appendChild(el("label", {}, [radio, " " + t[1]]));
    });
    if (!META.tiers) tiers.appendChild(el("p", { class: "note", text: "This build has only the gate tier." }));
    aside.appendChild(tiers);
  }
  function update() {
    writeState();
    drawTabs();
    drawFilters();
    const main = document.getElementById("main");
    main.textContent = "";
    main.setAttribute("data-view", state.view);
    VIEW_FUNCS[state.view](main);
    document.body.setAttribute("data-ready", "1");
    window.ecocomputeDrawn = (window.ecocomputeDrawn || 0) + 1;
  }
  window.addEventListener("hashchange", function () { readState(); update(); });
  document.querySelectorAll("a[href='#view=cite']").forEach(function (a) {
    a.onclick = function (event) { event.preventDefault(); state.view = "cite"; update(); window.scrollTo(0, 0); };
  });
  readState();
  update();
  window.ecocomputeReadyMs = performance.now();
})();
