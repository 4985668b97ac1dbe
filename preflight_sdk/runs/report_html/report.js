/* preflight run report: search, filters, keys and the timeline's zoom. The facts are in the markup;
   this only adds interaction. Safe to include more than once (each report initialises once). */
(function () {
  "use strict";

  function initReport(root) {
    if (root.getAttribute("data-pfr-ready")) return;
    root.setAttribute("data-pfr-ready", "1");
    var show = function (el) { if (el) el.hidden = false; };
    show(root.querySelector(".pfr-filters"));
    show(root.querySelector(".pfr-tl-tools"));
    show(root.querySelector(".pfr-keys"));

    // -- filters: text, status, suite ------------------------------------------------------
    var rows = Array.prototype.slice.call(root.querySelectorAll(".pfr-cases tbody tr"));
    var texts = null;  // each row's text, read on the first search
    var search = root.querySelector(".pfr-search");
    var suiteSelect = root.querySelector(".pfr-suite");
    var shown = root.querySelector(".pfr-shown");
    var statusButtons = Array.prototype.slice.call(root.querySelectorAll(".pfr-filters button[data-status]"));
    var state = { status: "all", suite: "", text: "" };

    function apply() {
      var count = 0;
      var words = state.text.toLowerCase().split(/\s+/).filter(Boolean);
      if (words.length && !texts) texts = rows.map(function (r) { return r.textContent.toLowerCase(); });
      for (var i = 0; i < rows.length; i++) {
        var r = rows[i];
        var ok = (state.status === "all" || r.getAttribute("data-status") === state.status) &&
          (!state.suite || r.getAttribute("data-suite") === state.suite);
        for (var w = 0; ok && w < words.length; w++) ok = texts[i].indexOf(words[w]) !== -1;
        r.hidden = !ok;
        if (ok) count++;
      }
      var articles = root.querySelectorAll(".pfr-failure, .pfr-also li");
      for (var j = 0; j < articles.length; j++) {
        var a = articles[j];
        var text = a.textContent.toLowerCase();
        var keep = state.status === "all" || state.status === "failed";
        for (var k = 0; keep && k < words.length; k++) keep = text.indexOf(words[k]) !== -1;
        var suite = a.querySelector("small");
        if (keep && state.suite && suite) keep = suite.textContent.indexOf(state.suite) === 0;
        a.hidden = !keep;
      }
      if (shown) shown.textContent = count + " of " + rows.length + " cases";
    }
    function setStatus(value) {
      state.status = value;
      statusButtons.forEach(function (b) { b.setAttribute("aria-pressed", String(b.getAttribute("data-status") === value)); });
      apply();
    }
    statusButtons.forEach(function (b) {
      b.addEventListener("click", function () { setStatus(b.getAttribute("data-status")); });
    });
    if (search) search.addEventListener("input", function () { state.text = search.value; apply(); });
    if (suiteSelect) suiteSelect.addEventListener("change", function () { state.suite = suiteSelect.value; apply(); });

    // -- timeline zoom -------------------------------------------------------------------------
    var tl = root.querySelector(".pfr-tl");
    function zoom(mode) {
      if (!tl) return;
      var total = Number(tl.getAttribute("data-total")) || 1;
      var from = 0, to = total;
      var tests = tl.getAttribute("data-tests");
      if (mode === "tests" && tests) {
        var parts = tests.split(",");
        from = Number(parts[0]); to = Math.max(Number(parts[1]), from + 1);
        var pad = (to - from) * 0.02; from = Math.max(0, from - pad); to = to + pad;
      }
      var span = to - from;
      var items = tl.querySelectorAll("[data-s]");
      for (var i = 0; i < items.length; i++) {
        var el = items[i];
        var s = Number(el.getAttribute("data-s")), e = Number(el.getAttribute("data-e") || s);
        var outside = e < from || s > to;
        el.style.display = outside ? "none" : "";
        if (outside) continue;
        var left = (Math.max(s, from) - from) / span, width = (Math.min(e, to) - Math.max(s, from)) / span;
        if (el.classList.contains("pfr-now")) {
          el.style.left = "calc(160px + (100% - 170px) * " + left.toFixed(5) + ")";
          var label = el.querySelector("span");
          if (label) label.style.cssText = left > 0.6 ? "left:auto;right:4px" : "left:4px;right:auto";
        } else {
          el.style.left = (left * 100).toFixed(3) + "%";
          if (el.classList.contains("pfr-bar")) el.style.width = (width * 100).toFixed(3) + "%";
        }
      }
      var ticks = tl.querySelectorAll(".pfr-axis span");
      for (var t = 0; t < ticks.length; t++) ticks[t].textContent = human(from + span * t / (ticks.length - 1));
      var buttons = root.querySelectorAll(".pfr-tl-tools button");
      for (var b = 0; b < buttons.length; b++) buttons[b].setAttribute("aria-pressed", String(buttons[b].getAttribute("data-zoom") === mode));
    }
    function human(ms) {
      ms = Math.round(ms);
      if (ms < 1000) return ms + " ms";
      if (ms < 60000) return (ms / 1000).toFixed(1) + " s";
      return Math.floor(ms / 60000) + " m " + Math.floor(ms % 60000 / 1000) + " s";
    }
    Array.prototype.forEach.call(root.querySelectorAll(".pfr-tl-tools button"), function (b) {
      b.addEventListener("click", function () { zoom(b.getAttribute("data-zoom")); });
    });

    // -- keys ------------------------------------------------------------------------------------
    var failures = Array.prototype.slice.call(root.querySelectorAll(".pfr-failure"));
    var current = -1;
    function go(step) {
      var visible = failures.filter(function (f) { return !f.hidden; });
      if (!visible.length) return;
      current = (current + step + visible.length) % visible.length;
      failures.forEach(function (f) { f.classList.remove("pfr-current"); });
      var target = visible[current];
      target.classList.add("pfr-current");
      target.focus({ preventScroll: true });
      target.scrollIntoView({ block: "start", behavior: "auto" });
    }
    // In a page of its own the keys work anywhere; embedded (a notebook), only inside the report.
    var alone = root.parentElement === document.body;
    (alone ? document : root).addEventListener("keydown", function (event) {
      var tag = (event.target && event.target.tagName) || "";
      if (event.ctrlKey || event.metaKey || event.altKey) return;
      if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") {
        if (event.key === "Escape" && search) { search.value = ""; state.text = ""; apply(); search.blur(); }
        return;
      }
      var handled = true;
      switch (event.key) {
        case "j": go(1); break;
        case "k": go(-1); break;
        case "/": if (search) { search.focus(); } break;
        case "f": setStatus("failed"); break;
        case "a": setStatus("all"); break;
        case "t": if (tl) tl.scrollIntoView({ block: "start" }); break;
        default: handled = false;
      }
      if (handled) event.preventDefault();
    });
    // Nothing is filtered yet: only the count is written (touching every row would cost a style pass).
    if (shown) shown.textContent = rows.length + " of " + rows.length + " cases";
  }

  function initAll() {
    var roots = document.querySelectorAll(".pfr");
    for (var i = 0; i < roots.length; i++) initReport(roots[i]);
  }
  window.preflightReport = { init: initReport, initAll: initAll };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", initAll);
  else initAll();
})();
