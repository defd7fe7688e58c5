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

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined) { e.textContent = text; }
    return e;
  }
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
  function number(x) { return (x > 0 ? "+" : x < 0 ? "−" : "±") + Math.abs(x).toFixed(2); }

  function show(h) {
    clearHint();
    box.appendChild(el("p", "note", (h.method === "exact" ? "Exact: " : "Estimated: ") + h.basis +
                       ". Values in game points of this hand, from what your seat knows."));
    var list = el("ol", "hint-list");
    h.actions.slice().sort(function (a, b) { return b.value - a.value; }).forEach(function (a) {
      var li = el("li", a.action === h.best ? "best" : "");
      li.dataset.action = a.action;
      li.appendChild(el("span", "hint-action", a.action));
      li.appendChild(el("span", "hint-value", " " + number(a.value) +
                        (a.exact ? " (exact)" : " ± " + a.se.toFixed(2))));
      if (a.action === h.best) { li.appendChild(el("b", null, " ← best")); }
      list.appendChild(li);
    });
    box.appendChild(list);
    box.dataset.seq = String(h.seq);
    mark(h.best);
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
