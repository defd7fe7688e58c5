// The invite's page (friend.html) for its maker: a click on the link selects it, and the page
// moves to the table once the friend sat down, or shows that the invite expired (it polls the
// invite's JSON every second).
(function () {
  "use strict";
  var link = document.getElementById("invite-link");
  if (link) { link.addEventListener("click", function () { link.select(); }); }
  var el = document.getElementById("invite-wait");
  if (!el) { return; }
  function poll() {
    fetch(el.dataset.poll, {credentials: "same-origin"}).then(function (r) { return r.json(); }).then(function (d) {
      if (d.table) { window.location = d.table; } else if (d.expired) { window.location.reload(); } else { window.setTimeout(poll, 1000); }
    }).catch(function () { window.setTimeout(poll, 2000); });
  }
  poll();
})();
