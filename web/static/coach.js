// A person's hint at the table (web/coach.py): asks the server for the values of the seat's
// legal actions now and lists them, the best first marked; the best card or button is outlined.
// The hint is for one position: it is cleared when the table moves on (its data-seq changes).
(function () {
  "use strict";
  var coach = document.getElementById("coach");
  var button = document.getElementById("hint-button");
  var table = document.getElementById("table");
  var box = document.getElementById("hint-box");
  if (!coach || !button || !table) { return; }

  var cards = window.bummerlCards, el = cards.el;
  function unmark() {
    Array.prototype.forEach.call(document.querySelectorAll(".hinted"), function (n) {
      n.classList.remove("hinted");
    });
  }
  function clearHint() { unmark(); while (box.firstChild) { box.removeChild(box.firstChild); } }
  function mark(best) {
    unmark();
    var target = best.indexOf("play ") === 0
      ? document.querySelector('#hand [data-card="' + best.slice(5) + '"]')
      : document.querySelector('#actions [data-action="' + best + '"]');
    if (target) { target.classList.add("hinted"); }
  }
  // game points as a person reads them: "+1.5", "−3", "0" (two decimals at most)
  function points(x) {
    var r = Math.round(x * 100) / 100;
    return r === 0 ? "0" : (r > 0 ? "+" : "−") + String(Math.abs(r));
  }
  function worth(a) {
    var r = Math.round(a.value * 100) / 100;
    var text = points(a.value) + " game point" + (Math.abs(r) === 1 ? "" : "s");
    // the estimate's standard error, where there is one worth showing
    if (!a.exact && a.se !== null && a.se >= 0.005) { text += " ± " + a.se.toFixed(2); }
    return text;
  }

  function show(h) {
    clearHint();
    var where = window.bummerlTable ? window.bummerlTable.state() : null;
    var only = h.actions.length === 1;
    var spread = h.actions.some(function (a) { return !a.exact && a.se !== null && a.se >= 0.005; });
    box.appendChild(el("p", "note", (h.method === "exact" ? "Exact: " : "Estimated: ") + h.basis + "." +
      (only ? "" : " What each action is worth: game points of this hand, + yours, − the opponent's, " +
                   "from what your seat knows" + (spread ? " (± the estimate's standard error)." : "."))));
    var list = el("ol", "hint-list");
    h.actions.slice().sort(function (a, b) { return b.value - a.value; }).forEach(function (a) {
      var li = el("li", a.action === h.best ? "best" : "");
      li.dataset.action = a.action;
      var name = cards.actionName(a.action, where);
      name.classList.add("hint-action");
      li.appendChild(name);
      if (!only) { li.appendChild(el("span", "hint-value", worth(a))); }
      if (a.action === h.best) { li.appendChild(el("b", "hint-best", only ? "your only move" : "best")); }
      list.appendChild(li);
    });
    box.appendChild(list);
    box.dataset.seq = String(h.seq);
    mark(h.best);
    if (box.scrollIntoView) { box.scrollIntoView({block: "nearest"}); }
  }

  function ask() {
    button.disabled = true;
    clearHint();
    box.appendChild(el("p", "note", "Working it out…"));
    fetch(coach.dataset.hintUrl, {credentials: "same-origin"})
      .then(function (r) { return r.json().then(function (d) { return {ok: r.ok, data: d}; }); })
      .then(function (a) {
        button.disabled = false;
        if (a.ok) { show(a.data); } else { clearHint(); box.appendChild(el("p", "refusal", a.data.message || a.data.error || "No hint now.")); }
      })
      .catch(function () { button.disabled = false; clearHint(); box.appendChild(el("p", "refusal", "The server does not answer.")); });
  }

  button.addEventListener("click", ask);
  document.addEventListener("keydown", function (e) {
    if ((e.key === "h" || e.key === "H") && !e.ctrlKey && !e.metaKey && !e.altKey &&
        !/input|textarea|select/i.test(document.activeElement.tagName)) { ask(); }
  });
  new MutationObserver(function () {
    if (box.dataset.seq && box.dataset.seq !== table.dataset.seq) { delete box.dataset.seq; clearHint(); }
  }).observe(table, {attributes: true, attributeFilter: ["data-seq"]});
})();
