// An exercise (web/coach.py): the seat's observation drawn from the page's JSON, each legal
// action a button; a click is an intent POSTed to the server, which checks it (the page never
// knows the answer before the server says it).
(function () {
  "use strict";
  var root = document.getElementById("exercise");
  if (!root) { return; }
  var SUITS = {C: "♣", D: "♦", H: "♥", S: "♠"};
  var SUIT_NAMES = {C: "clubs", D: "diamonds", H: "hearts", S: "spades"};
  var RANKS = {A: "A", T: "10", K: "K", Q: "Q", J: "J"};
  var RANK_NAMES = {A: "ace", T: "ten", K: "king", Q: "queen", J: "jack"};
  var WORDS = {exchange: "Exchange the trump jack", close: "Close the stock", claim: "Claim 66"};
  var s = JSON.parse(document.getElementById("exercise-state").textContent);
  var busy = false;

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined) { e.textContent = text; }
    return e;
  }
  function byId(id) { return document.getElementById(id); }
  function red(card) { return card[1] === "H" || card[1] === "D"; }
  function cardFace(card, tag) {
    var c = el(tag || "span", "pcard " + (red(card) ? "red" : "black"));
    c.dataset.card = card;
    c.title = RANK_NAMES[card[0]] + " of " + SUIT_NAMES[card[1]];
    c.setAttribute("aria-label", c.title);
    c.appendChild(el("span", "rank", RANKS[card[0]]));
    c.appendChild(el("span", "suit", SUITS[card[1]]));
    return c;
  }
  function legal(a) { return s.legal.indexOf(a) >= 0; }

  function draw() {
    var them = byId("ex-them");
    for (var i = 0; i < s.opponent_hand_size; i++) { them.appendChild(el("span", "pcard back")); }
    byId("ex-them-tally").textContent = s.opponent_tricks_won + " tricks";
    var married = s.marriages.filter(function (m) { return m.seat === s.seat; })
      .reduce(function (a, m) { return a + m.points; }, 0);
    byId("ex-you-tally").textContent = s.points + " points" + (married ? " (marriages " + married + ")" : "") +
      (s.pending_points ? ", " + s.pending_points + " pending" : "") + " · " + s.tricks_won + " tricks";
    var stock = byId("ex-stock");
    if (s.trump_card) {
      var face = cardFace(s.trump_card);
      face.classList.add("trumpcard");
      if (!s.trump_face_up) { face.classList.add("remembered"); }
      stock.appendChild(face);
    }
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
      var b = cardFace(card, "button");
      b.type = "button";
      var ok = legal("play " + card);
      b.disabled = !ok;
      b.classList.add(ok ? "playable" : "unplayable");
      b.addEventListener("click", function () { answer("play " + card); });
      hand.appendChild(b);
    });
    var actions = byId("ex-actions");
    s.legal.filter(function (a) { return a.indexOf("play ") !== 0; }).forEach(function (a) {
      var b = el("button", "act", a.indexOf("declare ") === 0 ? "Marriage in " + SUIT_NAMES[a.slice(8)] : (WORDS[a] || a));
      b.type = "button";
      b.dataset.action = a;
      b.addEventListener("click", function () { answer(a); });
      actions.appendChild(b);
    });
  }

  function verdict(d) {
    var v = byId("ex-verdict");
    v.className = "pstatus " + (d.correct ? "right" : "wrong");
    v.textContent = d.correct
      ? "Right! " + d.answer + " is the one action best against every hand the opponent could hold. You solved " + d.solved + "."
      : "Not this one: it loses " + d.loss.toFixed(2) + " game points on average against the hands the opponent could hold. Try again.";
    if (d.correct) {
      var table = byId("ex-values"), body = table.tBodies[0];
      while (body.firstChild) { body.removeChild(body.firstChild); }
      d.actions.slice().sort(function (a, b) { return b.value - a.value; }).forEach(function (a) {
        var tr = el("tr", a.action === d.answer ? "best" : "");
        tr.appendChild(el("td", null, a.action));
        tr.appendChild(el("td", "num", a.value.toFixed(2)));
        tr.appendChild(el("td", "num", a.loss.toFixed(2)));
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
