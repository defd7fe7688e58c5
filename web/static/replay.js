// Replay of a finished hand: one step shown at a time; buttons, ← → Home End, and #step-N links.
(function () {
  "use strict";
  var root = document.getElementById("replay");
  if (!root) { return; }
  var count = Number(root.dataset.steps), current = 0;
  var where = document.getElementById("replay-where");

  function show(step, push) {
    current = Math.max(0, Math.min(count - 1, step));
    root.querySelectorAll(".step").forEach(function (el) {
      el.hidden = el.id !== "step-" + current;
    });
    where.textContent = "step " + current + " of " + (count - 1);
    if (push) { history.replaceState(null, "", "#step-" + current); }
  }
  function fromHash() {
    var m = /^#step-(\d+)$/.exec(location.hash);
    show(m ? Number(m[1]) : 0, false);
  }
  var moves = {first: function () { return 0; }, prev: function () { return current - 1; },
               next: function () { return current + 1; }, last: function () { return count - 1; }};
  document.querySelectorAll("[data-go]").forEach(function (button) {
    button.addEventListener("click", function () { show(moves[button.dataset.go](), true); });
  });
  document.addEventListener("keydown", function (event) {
    var go = {ArrowLeft: "prev", ArrowRight: "next", Home: "first", End: "last"}[event.key];
    if (!go || event.altKey || event.ctrlKey || event.metaKey) { return; }
    event.preventDefault();
    show(moves[go](), true);
  });
  window.addEventListener("hashchange", fromHash);
  fromHash();
})();
