// Filters, search, pagination, deep links, copy buttons, and exchanges rendered when opened. The content is plain
// HTML; only the details of exchanges past the page's budget are data (#exchange-data, JSON), rendered here as text
// when their line or their case is opened. Runs of thousands of results show one page at a time (PAGE results) so
// the page never freezes.
(function () {
  "use strict";
  var PAGE = 200;
  var doc = document;
  var list = doc.getElementById("rule-list");
  var form = doc.getElementById("toolbar");
  if (!list || !form) return;
  var dataBlock = doc.getElementById("exchange-data");
  var exchangeData = null;  // parsed on first use
  var more = doc.getElementById("more");
  var moreWrap = doc.getElementById("more-wrap");
  var shown = doc.getElementById("shown");
  var search = doc.getElementById("q");
  var limit = PAGE;

  var rules = Array.prototype.map.call(list.children, function (el) {
    return {
      el: el, suite: el.getAttribute("data-suite"), level: el.getAttribute("data-level"), text: null,
      hidden: false, paged: false,
      results: Array.prototype.map.call(el.querySelectorAll(".result"), function (r) {
        return { el: r, status: r.getAttribute("data-status"), text: null, hidden: false };
      })
    };
  });

  function checked(name) {
    var set = {};
    form.querySelectorAll('input[name="' + name + '"]').forEach(function (box) { set[box.value] = box.checked; });
    return set;
  }
  // Search text is built on first use only: reading textContent of thousands of rules costs time.
  function ruleText(rule) {
    if (rule.text === null) {
      var head = rule.el.querySelector("h3");
      var chips = rule.el.querySelector(".chips");
      rule.text = ((head ? head.textContent : "") + " " + (chips ? chips.textContent : "")).toLowerCase();
    }
    return rule.text;
  }
  function resultText(result) {
    if (result.text === null) {
      var parts = result.el.querySelectorAll(".line, .need, .blk, .base");
      result.text = Array.prototype.map.call(parts, function (p) { return p.textContent; }).join(" ").toLowerCase();
    }
    return result.text;
  }
  function setHidden(item, value) {
    if (item.hidden !== value) { item.hidden = value; item.el.hidden = value; }
  }

  function apply() {
    var statuses = checked("status"), suites = checked("suite"), levels = checked("level");
    var query = search.value.trim().toLowerCase();
    var results = 0, visibleRules = 0, total = 0, onPage = 0;
    rules.forEach(function (rule) {
      total += rule.results.length;
      var ok = suites[rule.suite] !== false && levels[rule.level] !== false;
      var hits = 0;
      if (ok) {
        var ruleHit = !query || ruleText(rule).indexOf(query) >= 0;
        rule.results.forEach(function (r) {
          var hit = statuses[r.status] !== false && (ruleHit || resultText(r).indexOf(query) >= 0);
          setHidden(r, !hit);
          if (hit) hits += 1;
        });
      }
      setHidden(rule, hits === 0);
      var paged = hits > 0 && onPage >= limit;
      if (rule.paged !== paged) { rule.paged = paged; rule.el.classList.toggle("paged-out", paged); }
      if (hits > 0) {
        visibleRules += 1; results += hits;
        if (!paged) onPage += hits;
      }
    });
    shown.textContent = "Showing " + results + " of " + total + " results in " + visibleRules + " rules" +
      (onPage < results ? " (" + onPage + " on this page)" : "") + ".";
    moreWrap.hidden = onPage >= results;
    more.textContent = "Show " + Math.min(PAGE, results - onPage) + " more (" + (results - onPage) + " left)";
  }

  function setAll(name, value) {
    form.querySelectorAll('input[name="' + name + '"]').forEach(function (box) { box.checked = value; });
  }
  function reset() {
    ["status", "suite", "level"].forEach(function (n) { setAll(n, true); });
    search.value = "";
    limit = PAGE;
  }

  // Deep links land below the sticky toolbar: its real height, for the stylesheet's scroll-margin-top.
  function measureToolbar() { doc.documentElement.style.setProperty("--toolbar-h", form.offsetHeight + "px"); }

  // Deep links (#AUTH-PRM-01, #AUTH-PRM-01--tool_server): make the element visible, open it, scroll to it.
  function reveal() {
    var id = location.hash.slice(1);
    try { id = decodeURIComponent(id); } catch (err) { return; }  // a malformed link is not worth an error
    var el = id && doc.getElementById(id);
    if (!el || !list.contains(el)) return;
    var article = el.closest("article.rule");
    var rule = rules.find(function (r) { return r.el === article; });
    if (!rule) return;
    if (rule.hidden || (el !== article && el.hidden)) { reset(); apply(); }
    while (rule.paged) { limit += PAGE; apply(); }
    for (var node = el; node && node !== list; node = node.parentElement) {
      if (node.tagName === "DETAILS") node.open = true;
    }
    var evidence = el.querySelector("details.evidence");
    if (evidence) evidence.open = true;
    if (el.matches(".exchanges > li.cx")) expand(el);  // a link to one exchange opens it
    var exchange = el.querySelector(":scope > details.ex");
    if (exchange) exchange.open = true;
    measureToolbar();  // its height changes with the filters' status line
    el.scrollIntoView({ block: "start" });
  }

  // -- exchanges held as data: rendered as text (never as markup) when opened ----------------------------------
  function detailsData(resultId, n) {
    if (exchangeData === null) {
      try { exchangeData = JSON.parse(dataBlock ? dataBlock.textContent : "{}"); } catch (err) { exchangeData = {}; }
    }
    var mine = exchangeData[resultId];
    return mine ? mine[String(n)] || null : null;
  }
  function node(tag, cls, text) {
    var made = doc.createElement(tag);
    if (cls) made.className = cls;
    if (text !== undefined) made.textContent = text;
    return made;
  }
  function part(label, text, preClass, hidden) {
    var div = node("div", "part");
    div.appendChild(node("p", "lbl", label));
    div.appendChild(node("pre", preClass || "", text));
    if (hidden) div.appendChild(node("p", "note", "… " + hidden + " more characters in report.json"));
    return div;
  }
  function exchangeBody(d) {
    var body = node("div", "exb");
    if (d.error) {
      var err = node("p", "err");
      err.appendChild(node("b", "", "Error:"));
      err.appendChild(doc.createTextNode(" " + d.error));
      body.appendChild(err);
    }
    if (d.omitted) body.appendChild(node("p", "note", d.omitted));
    if (d.request_headers) body.appendChild(part("Request headers", d.request_headers));
    if (d.request_body) body.appendChild(part("Request body", d.request_body[0], "body", d.request_body[1]));
    if (d.response_headers) {
      var status = typeof d.status === "number" ? " · status " + d.status : "";
      body.appendChild(part("Response headers" + status, d.response_headers));
    }
    if (d.response_body) {
      body.appendChild(part("Response body (excerpt)", d.response_body[0], "body", d.response_body[1]));
    }
    var label = "Reproduce" + (d.inbound ? " · the target sent this request to the harness" : "") +
      (d.started_at ? " · sent " + d.started_at : "");
    if (d.curl) body.appendChild(part(label, d.curl, "curl"));
    return body;
  }
  // An open <details class="ex"> for the exchange whose item is `item` (its line copied, its details from the
  // page or from the data); the item itself is left as it is.
  function exchangeDetails(item) {
    var inPage = item.querySelector(":scope > details.ex");
    if (inPage) {
      var copy = inPage.cloneNode(true);
      copy.open = true;
      return copy;
    }
    var details = node("details", "ex");
    var summary = doc.createElement("summary");
    Array.prototype.forEach.call(item.childNodes, function (child) {
      if (!(child.classList && child.classList.contains("omit"))) summary.appendChild(child.cloneNode(true));
    });
    details.appendChild(summary);
    var result = item.closest("li.result");
    var d = result && detailsData(result.id, item.getAttribute("value"));
    if (d) details.appendChild(exchangeBody(d));
    details.open = true;
    return details;
  }
  // A line of the evidence list opened in place.
  function expand(item) {
    if (!item.classList.contains("cx")) return;
    var details = exchangeDetails(item);
    while (item.firstChild) item.removeChild(item.firstChild);
    item.appendChild(details);
    item.classList.remove("cx");
    item.removeAttribute("tabindex");
    copyButtonsIn(item);
  }
  // A case row opens its own exchanges in a row below it (and closes them again).
  function toggleCase(button) {
    var row = button.closest("tr");
    var next = row.nextElementSibling;
    var opening = button.getAttribute("aria-expanded") !== "true";
    button.setAttribute("aria-expanded", opening ? "true" : "false");
    if (next && next.classList.contains("case-ex")) { next.hidden = !opening; return; }
    if (!opening) return;
    var result = row.closest("li.result");
    var cell = node("td");
    cell.colSpan = row.children.length;
    var items = node("ol", "case-exchanges");
    (row.getAttribute("data-exchanges") || "").split(" ").forEach(function (n) {
      var source = n && result && doc.getElementById(result.id + "-x" + n);
      if (!source) return;
      var item = node("li");
      item.value = Number(n);
      item.appendChild(exchangeDetails(source));
      items.appendChild(item);
    });
    cell.appendChild(items);
    var added = node("tr", "case-ex");
    added.appendChild(cell);
    row.parentNode.insertBefore(added, row.nextSibling);
    copyButtonsIn(added);
  }

  // The button sits in the label above the command, so the command's text stays exactly what is copied.
  function addCopyButton(pre) {
    var label = pre.previousElementSibling;
    if (!navigator.clipboard || !label || label.querySelector(".copy")) return;
    var button = doc.createElement("button");
    button.type = "button";
    button.className = "copy";
    button.textContent = "Copy";
    button.setAttribute("aria-label", "Copy the curl command");
    label.appendChild(button);
  }
  function copyButtonsIn(root) { root.querySelectorAll("details[open] > .exb pre.curl").forEach(addCopyButton); }

  form.addEventListener("change", function () { limit = PAGE; apply(); });
  form.addEventListener("submit", function (e) { e.preventDefault(); });
  var timer = 0;
  search.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(function () { limit = PAGE; apply(); }, 120);
  });
  form.addEventListener("click", function (e) {
    var act = e.target.closest("button") && e.target.closest("button").getAttribute("data-act");
    if (!act) return;
    if (act === "reset") { reset(); apply(); }
    if (act === "problems") {
      form.querySelectorAll('input[name="status"]').forEach(function (box) {
        box.checked = box.value !== "passed" && box.value !== "skipped";
      });
      limit = PAGE; apply();
    }
    if (act === "expand" || act === "collapse") {
      rules.forEach(function (rule) {
        if (rule.hidden || rule.paged) return;
        rule.el.querySelectorAll("details").forEach(function (d) { d.open = act === "expand"; });
      });
      if (act === "expand") copyButtonsIn(list);
    }
  });
  more.addEventListener("click", function () { limit += PAGE; apply(); });
  // A count in the matrix shows exactly those results: one suite, one status.
  var matrix = doc.querySelector("table.matrix");
  if (matrix) matrix.addEventListener("click", function (e) {
    var link = e.target.closest("a[data-suite]");
    if (!link) return;
    reset();
    form.querySelectorAll('input[name="suite"]').forEach(function (box) {
      box.checked = box.value === link.getAttribute("data-suite");
    });
    form.querySelectorAll('input[name="status"]').forEach(function (box) {
      box.checked = box.value === link.getAttribute("data-status");
    });
    apply();
  });
  list.addEventListener("click", function (e) {
    var opener = e.target.closest("button.case-open");
    if (opener) { toggleCase(opener); return; }
    var line = e.target.closest(".exchanges > li.cx");
    if (line && !e.target.closest("a")) { expand(line); return; }
    var button = e.target.closest("button.copy");
    if (!button) return;
    var text = button.parentElement.nextElementSibling.textContent;
    navigator.clipboard.writeText(text).then(function () { button.textContent = "Copied"; },
      function () { button.textContent = "Select and copy"; });
  });
  // `toggle` does not bubble: listen in the capture phase to add copy buttons when evidence is opened.
  list.addEventListener("toggle", function (e) { if (e.target.open) copyButtonsIn(e.target); }, true);
  list.addEventListener("keydown", function (e) {
    if ((e.key === "Enter" || e.key === " ") && e.target.matches && e.target.matches(".exchanges > li.cx")) {
      e.preventDefault(); expand(e.target);
    }
  });
  doc.addEventListener("keydown", function (e) {
    if (e.key === "/" && doc.activeElement !== search && !/INPUT|TEXTAREA/.test(doc.activeElement.tagName)) {
      e.preventDefault(); search.focus();
    }
  });
  window.addEventListener("hashchange", reveal);

  // Printing expands everything (all pages, all evidence), then restores the reader's view.
  var printState = null;
  window.addEventListener("beforeprint", function () {
    var lines = Array.prototype.slice.call(list.querySelectorAll(".exchanges > li.cx"));
    lines.forEach(expand);  // exchanges held as data are printed whole too (closed again after)
    lines.forEach(function (item) { var d = item.querySelector("details.ex"); if (d) d.open = false; });
    printState = Array.prototype.filter.call(list.querySelectorAll("details"), function (d) { return !d.open; });
    printState.forEach(function (d) { d.open = true; });
  });
  window.addEventListener("afterprint", function () {
    if (printState) printState.forEach(function (d) { d.open = false; });
    printState = null;
  });

  list.querySelectorAll("button.case-open").forEach(function (b) { b.hidden = false; });
  form.hidden = false;
  apply();
  measureToolbar();
  window.addEventListener("resize", measureToolbar);
  copyButtonsIn(list);
  if (location.hash) reveal();
})();
