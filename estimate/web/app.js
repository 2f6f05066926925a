// The estimator page: reads the form, runs EcoEstimate.evaluate on the embedded artifact, shows the answer.
(function () {
  "use strict";
  const artifact = window.ECOCOMPUTE_ARTIFACT;
  const $ = (id) => document.getElementById(id);
  const pct = (v) => `${v >= 0 ? "+" : "-"}${Math.abs(v).toFixed(1)}%`;

  function el(tag, attrs, text) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function row(dl, term, value) {
    dl.appendChild(el("dt", {}, term));
    dl.appendChild(el("dd", {}, value));
  }

  function bar(answer) {
    const [low, high] = answer.change_ci95;
    const lo = Math.min(low, 0), hi = Math.max(high, 0);
    const span = hi - lo || 1;
    const at = (v) => `${(100 * (v - lo)) / span}%`;
    const b = el("div", { class: "bar", "data-testid": "bar" });
    const r = el("div", { class: "range" });
    r.style.left = at(low);
    r.style.width = `${(100 * (high - low)) / span}%`;
    const z = el("div", { class: "zero", title: "0%" });
    z.style.left = at(0);
    const p = el("div", { class: "point" });
    p.style.left = at(answer.change_pct);
    b.append(r, z, p);
    return b;
  }

  function show(answer) {
    const box = $("answer");
    box.replaceChildren();
    if (answer.change_pct === null) {
      box.appendChild(el("div", { class: "headline", "data-testid": "change" }, "Not measured yet: no estimate"));
    } else {
      box.appendChild(el("div", { class: "headline", "data-testid": "change" }, `${pct(answer.change_pct)} energy per token`));
      const [low, high] = answer.change_ci95;
      box.appendChild(el("div", { class: "interval", "data-testid": "interval" }, `95% interval ${pct(low)} to ${pct(high)}`));
      box.appendChild(bar(answer));
    }
    box.appendChild(el("p", { "data-testid": "recommendation" }, answer.recommendation.text));
    const dl = el("dl");
    row(dl, "basis", `${answer.basis} (${answer.source}); confidence ${answer.confidence}`);
    if (answer.j_per_token !== null) {
      row(dl, "energy", `${answer.j_per_token.toPrecision(4)} J/token, ${answer.wh_per_1k_tokens.toPrecision(4)} Wh per 1,000 tokens`);
    }
    if (answer.crossover) row(dl, "crossover", answer.crossover.message);
    row(dl, "card", `${answer.gpu_resolved.name || "any " + answer.gpu_resolved.arch} (${answer.gpu_resolved.arch})`);
    row(dl, "submissions", answer.submission_ids.length ? answer.submission_ids.join(", ")
      : answer.basis === "not-measured" ? "none" : "none (published figures)");
    if (answer.dois.length) row(dl, "published DOIs", answer.dois.join(", "));
    box.appendChild(dl);
    if (answer.published) {
      const p = answer.published;
      box.appendChild(el("p", { class: "published", "data-testid": "published" },
        `Published elsewhere (shown apart, basis: published): ${pct(p.change_pct)} (95% ${pct(p.change_ci95[0])} to ${pct(p.change_ci95[1])}), sessions ${p.sessions.join(", ")}; doi ${p.dois.join(", ")}`));
    }
    const ul = el("ul", { class: "reasons" });
    for (const r of answer.reasons) {
      const li = el("li");
      li.append(el("code", {}, r.code), document.createTextNode(` ${r.text}`));
      ul.appendChild(li);
    }
    box.appendChild(ul);
  }

  function question() {
    return {
      gpu: $("gpu").value.trim(), precision: $("precision").value, engine: $("engine").value, stack: $("stack").value,
      batch_size: Number($("batch_size").value), prompt_tokens: Number($("prompt_tokens").value),
      new_tokens: Number($("new_tokens").value), tier: $("tier").value,
    };
  }

  function run(event) {
    if (event) event.preventDefault();
    const size = Number($("params_b").value);
    try {
      if (!(size > 0)) throw new Error("params_b: give a model size above 0 (billions of parameters)");
      show(window.EcoEstimate.evaluate(artifact, question(), size));
    } catch (error) {
      $("answer").replaceChildren(el("p", { class: "error", "data-testid": "error" }, error.message));
    }
  }

  for (const gpu of artifact.gpus) $("gpus").appendChild(el("option", { value: gpu.name }));
  const d = artifact.dataset;
  $("dataset").textContent = `Dataset v${d.version}, DOI ${d.doi || "not minted yet"}, ${d.submissions} submissions, newest ${d.newest_submission_at}. ${d.citation}. Literature tier: ${d.literature}.`;
  $("question").addEventListener("submit", run);
  run();
})();
