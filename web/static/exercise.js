// An exercise (web/coach.py): the seat's observation drawn from the page's JSON, each legal
// action a button; a click is an intent POSTed to the server, which checks it (the page never
// knows the answer before the server says it). The cards and the small DOM helpers are
// web/static/cards.js's, loaded before this.
(function () {
  "use strict";
  var root = document.getElementById("exercise");
  if (!root) { return; }
  var cards = window.bummerlCards;
  var SUITS = cards.SUITS, SUIT_NAMES = cards.SUIT_NAMES;
  var el = cards.el, byId = cards.byId, cardFace = cards.cardFace;
  var s = JSON.parse(document.getElementById("exercise-state").textContent);
  var busy = false;

  function legal(a) { return s.legal.indexOf(a) >= 0; }

  function draw() {
    cards.backs(byId("ex-them"), s.opponent_hand_size);
    byId("ex-them-tally").textContent = s.opponent_tricks_won + " tricks";
    var married = s.marriages.filter(function (m) { return m.seat === s.seat; })
      .reduce(function (a, m) { return a + m.points; }, 0);
    byId("ex-you-tally").textContent = s.points + " points" + (married ? " (marriages " + married + ")" : "") +
      (s.pending_points ? ", " + s.pending_points + " pending" : "") + " · " + s.tricks_won + " tricks";
    var stock = byId("ex-stock");
    if (s.trump_card) { stock.appendChild(cards.trumpFace(s.trump_card, s.trump_face_up)); }
    stock.appendChild(el("span", "caption", "trump " + SUITS[s.trump_suit] + " " + SUIT_NAMES[s.trump_suit] + " · " +
      (s.closed_by !== null ? "stock closed by " + (s.closed_by === s.seat ? "you" : "the opponent")
        : s.stock_size === 0 ? "stock exhausted" : "stock " + s.stock_size)));
    var trick = byId("ex-trick");
    if (s.lead_card) {
      trick.appendChild(cardFace(s.lead_card));
      trick.appendChild(el("span", "caption", "the opponent led"));
    } else {
      trick.appendChild(el("span", "caption", "you lead"));
    }
    var hand = byId("ex-hand");
    s.hand.forEach(function (card) {
      hand.appendChild(cards.handCard(card, legal("play " + card), function () { answer("play " + card); }));
    });
    var actions = byId("ex-actions");
    s.legal.filter(function (a) { return a.indexOf("play ") !== 0; }).forEach(function (a) {
      var b = el("button", "act");
      b.appendChild(cards.actionName(a, s));
      b.type = "button";
      b.dataset.action = a;
      b.addEventListener("click", function () { answer(a); });
      actions.appendChild(b);
    });
  }

  // game points as a person reads them: 1.5, 3, 0.33 (two decimals at most)
  function gamePoints(x) { return String(Math.round(x * 100) / 100); }

  function verdict(d) {
    var v = byId("ex-verdict");
    v.className = "pstatus " + (d.correct ? "right" : "wrong");
    cards.clear(v);
    if (d.correct) {
      v.appendChild(document.createTextNode("Right! "));
      v.appendChild(cards.actionName(d.answer, s));
      v.appendChild(document.createTextNode(" is the one action best against every hand the opponent could hold. You solved " + d.solved + "."));
    } else {
      v.textContent = "Not this one: it loses " + gamePoints(d.loss) + " game points on average against the hands the opponent could hold. Try again.";
    }
    if (d.correct) {
      var table = byId("ex-values"), body = cards.clear(table.tBodies[0]);
      d.actions.slice().sort(function (a, b) { return b.value - a.value; }).forEach(function (a) {
        var tr = el("tr", a.action === d.answer ? "best" : "");
        var name = el("td");
        name.dataset.action = a.action;
        name.appendChild(cards.actionName(a.action, s));
        tr.appendChild(name);
        tr.appendChild(el("td", "num", (a.value > 0 ? "+" : a.value < 0 ? "−" : "") + gamePoints(Math.abs(a.value))));
        tr.appendChild(el("td", "num", gamePoints(a.loss)));
        body.appendChild(tr);
      });
      table.hidden = false;
    }
  }

  function answer(action) {
    if (busy) { return; }
    busy = true;
    fetch(s.solve_url, {method: "POST", credentials: "same-origin",
                        headers: {"Content-Type": "application/json", "X-CSRFToken": root.dataset.csrf},
                        body: JSON.stringify({action: action})})
      .then(function (r) { return r.json().then(function (d) { return {ok: r.ok, data: d}; }); })
      .then(function (a) {
        busy = false;
        if (a.ok) { verdict(a.data); } else { byId("ex-verdict").textContent = a.data.error || "Refused."; }
      })
      .catch(function () { busy = false; byId("ex-verdict").textContent = "The server does not answer."; });
  }

  draw();
})();
