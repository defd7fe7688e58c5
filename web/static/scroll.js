// Wide tables: a table (or its .scroll wrapper) wider than its box scrolls sideways; this
// marks it so a reader can tell: a line above it ("scroll sideways ...") and a faded edge on
// each side that has more (classes more-left / more-right, style.css). Run on load, on resize,
// after each live update (which replaces the tables) and as the reader scrolls.
(function () {
  "use strict";
  var HINT = "⇆ wider than the screen: scroll sideways to see all of it";

  function scroller(el) {
    var overflow = getComputedStyle(el).overflowX;
    return overflow === "auto" || overflow === "scroll";
  }

  function hintFor(el) {
    var before = el.previousElementSibling;
    if (before && before.classList.contains("scroll-hint")) { return before; }
    var hint = document.createElement("p");
    hint.className = "scroll-hint";
    hint.textContent = HINT;
    el.parentNode.insertBefore(hint, el);
    return hint;
  }

  function mark(el) {
    var wide = scroller(el) && el.scrollWidth > el.clientWidth + 1;
    var before = el.previousElementSibling;
    if (wide || (before && before.classList.contains("scroll-hint"))) {
      hintFor(el).classList.toggle("on", wide);
    }
    el.classList.toggle("scrolls", wide);
    el.classList.toggle("more-left", wide && el.scrollLeft > 1);
    el.classList.toggle("more-right", wide && el.scrollLeft + el.clientWidth < el.scrollWidth - 1);
  }

  function markAll() {
    document.querySelectorAll("main table, main .scroll").forEach(mark);
  }

  document.addEventListener("scroll", function (event) {
    var el = event.target;
    if (el && el.classList && el.classList.contains("scrolls")) { mark(el); }
  }, true);
  window.addEventListener("resize", markAll);
  document.addEventListener("bummerl:update", markAll);
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", markAll); }
  else { markAll(); }
})();
