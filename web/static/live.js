// The dashboard's live pages: one EventSource per page (the element with data-events), whose
// `update` events replace the inner HTML of the elements they name; clocks count down here.
(function () {
  "use strict";
  var offset = 0; // server time minus this browser's time, ms

  function syncTime() {
    var felt = document.querySelector("[data-now]");
    if (felt) { offset = Date.parse(felt.dataset.now) - Date.now(); }
  }

  function secs(ms) { return (Math.max(0, ms) / 1000).toFixed(1) + " s"; }

  function tick() {
    var now = Date.now() + offset;
    document.querySelectorAll(".clock[data-deadline]").forEach(function (el) {
      var deadline = Date.parse(el.dataset.deadline);
      if (isNaN(deadline)) { return; }
      var started = Date.parse(el.dataset.started);
      var move = Number(el.dataset.moveMs), bank = Number(el.dataset.bankMs);
      var left = deadline - now;
      var text = secs(left) + " left";
      if (el.dataset.houseMs) {  // a house bot: the service's house move time, no bank
        text += " of " + secs(Number(el.dataset.houseMs)) + " (house move time)";
      } else if (!isNaN(started) && Math.abs(deadline - (started + move + bank)) < 1500) {
        var used = now - started;
        text += " (move " + secs(move - used) + " · bank " + secs(Math.min(bank, bank - (used - move))) + ")";
      }
      el.textContent = text;
      el.classList.toggle("low", left < 2000);
    });
  }

  function start() {
    var badge = document.getElementById("live-badge");
    syncTime();
    tick();
    window.setInterval(tick, 100);
    if (!badge || !badge.dataset.events || !window.EventSource) { return; }
    listen(badge, badge.dataset.events, badge.dataset.fallback);
  }

  // The stream at `url`; when it is refused (the socket tier is full), the one at `fallback`
  // (the web's own), if any: every update is the whole live part, so nothing is missed.
  function listen(badge, url, fallback) {
    var source = new EventSource(url);
    source.addEventListener("open", function () {
      badge.textContent = "● live"; badge.className = "live";
    });
    source.addEventListener("update", function (event) {
      var data = JSON.parse(event.data);
      Object.keys(data.html).forEach(function (id) {
        var el = document.getElementById(id);
        if (el) { el.innerHTML = data.html[id]; }
      });
      syncTime();
      tick();
      document.dispatchEvent(new CustomEvent("bummerl:update"));
      if (data.final) {
        source.close();
        badge.textContent = "● over"; badge.className = "live over";
      }
    });
    source.addEventListener("error", function () {
      if (source.readyState === EventSource.CLOSED) {
        if (fallback) { listen(badge, fallback, null); return; }
        badge.textContent = "● not live (reload later)"; badge.className = "live off";
      } else {
        badge.textContent = "● reconnecting"; badge.className = "live off";
      }
    });
  }

  // Sortable tables: click a header with data-sort; the order survives live updates.
  var sortState = {};
  function sortTable(table) {
    var key = table.dataset.profile || "table", state = sortState[key];
    if (!state) { return; }
    var tbody = table.tBodies[0];
    var rows = Array.prototype.slice.call(tbody.rows).filter(function (r) { return r.cells.length > 1; });
    rows.sort(function (a, b) {
      var x = a.cells[state.col], y = b.cells[state.col];
      var vx = x.dataset.value !== undefined ? x.dataset.value : x.textContent.trim();
      var vy = y.dataset.value !== undefined ? y.dataset.value : y.textContent.trim();
      var c;
      if (state.num) {
        var nx = vx === "" ? -Infinity : Number(vx), ny = vy === "" ? -Infinity : Number(vy);
        c = nx - ny;
      } else { c = vx.localeCompare(vy); }
      return state.dir * c;
    });
    rows.forEach(function (r) { tbody.appendChild(r); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
      th.classList.toggle("sorted-asc", i === state.col && state.dir > 0);
      th.classList.toggle("sorted-desc", i === state.col && state.dir < 0);
    });
  }
  function sortAll() { document.querySelectorAll("table.sortable").forEach(sortTable); }
  document.addEventListener("click", function (event) {
    var th = event.target.closest && event.target.closest("table.sortable th[data-sort]");
    if (!th) { return; }
    var table = th.closest("table"), key = table.dataset.profile || "table";
    var col = th.cellIndex, prev = sortState[key];
    var dir = prev && prev.col === col ? -prev.dir : (th.dataset.sort === "num" ? -1 : 1);
    sortState[key] = {col: col, dir: dir, num: th.dataset.sort === "num"};
    sortTable(table);
  });
  document.addEventListener("bummerl:update", sortAll);

  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", start); }
  else { start(); }
})();
