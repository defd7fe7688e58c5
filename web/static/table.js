// The people's table: the page draws the state the server sends (GET the table's JSON) and
// nothing else; a click (or key, or tap) is an intent POSTed to the server, which the engine
// service accepts or refuses. An event stream says when the table changed; the page then
// reloads the state. Every name and text goes in with textContent (never as HTML). The cards and
// the small DOM helpers are web/static/cards.js's, loaded before this.
(function () {
  "use strict";
  var root = document.getElementById("table");
  if (!root) { return; }
  var cards = window.bummerlCards;
  var SUITS = cards.SUITS, SUIT_NAMES = cards.SUIT_NAMES, RANKS = cards.RANKS;
  var el = cards.el, byId = cards.byId, clear = cards.clear, cardFace = cards.cardFace;
  var state = JSON.parse(document.getElementById("table-state").textContent);
  var offset = 0;       // server time minus this browser's time, ms
  var busy = false;     // an intent is on its way
  var lastTrickTimer = null, shownTricks = null;
  var badge = document.getElementById("table-live");

  function you() { return state.seat; }
  function them() { return 1 - state.seat; }
  function nameOf(seat) { return seat === you() ? "You" : state.names[seat]; }

  function secs(ms) {
    ms = Math.max(0, ms);
    if (ms >= 60000) { return Math.floor(ms / 60000) + ":" + ("0" + Math.floor(ms % 60000 / 1000)).slice(-2); }
    return (ms / 1000).toFixed(1) + " s";
  }

  // --- drawing ---------------------------------------------------------------------------
  function draw() {
    var s = state;
    document.dispatchEvent(new CustomEvent("bummerl:table"));
    offset = Date.parse(s.now) - Date.now();
    var over = s.state !== "running";
    root.classList.toggle("over", over);
    root.classList.toggle("my-turn", !over && s.to_act === you());
    root.dataset.seq = s.seq;
    byId("them-name").textContent = s.names[them()];
    byId("you-name").textContent = "You (" + s.names[you()] + ")";
    // the Bummerl: game points each side still needs, a label that cannot be misread
    var line = clear(byId("scoreline"));
    line.appendChild(el("span", "label", "Bummerl · game points still needed to win (from 7 down):"));
    var needed = s.game_points_needed.map(function (n) { return Math.max(0, n); });
    var mine = el("span", "need you-need");
    mine.appendChild(el("b", null, String(needed[you()])));
    mine.appendChild(document.createTextNode(" you"));
    var theirs = el("span", "need them-need");
    theirs.appendChild(el("b", null, String(needed[them()])));
    theirs.appendChild(document.createTextNode(" " + s.names[them()]));
    line.appendChild(mine); line.appendChild(el("span", "sep", "·")); line.appendChild(theirs);
    line.appendChild(el("span", "meta", (s.rated ? "rated" : "casual") + " · " + s.profile +
                        " · hand " + (s.hand_number + 1) + (s.dealer === you() ? " (you dealt)" : "")));
    // opponent
    var backs = cards.backs(clear(byId("them-hand")), s.opponent_hand_size);
    backs.appendChild(el("span", "sr", s.opponent_hand_size + " cards"));
    byId("them-tally").textContent = s.opponent_tricks_won + " trick" + (s.opponent_tricks_won === 1 ? "" : "s");
    drawYouTally();
    drawFelt();
    drawHand();
    drawActions();
    drawStatus();
    drawResults();
    drawFairness();
    tick();
  }

  function drawYouTally() {
    var s = state, t = clear(byId("you-tally"));
    var married = s.marriages.filter(function (m) { return m.seat === you(); })
      .reduce(function (a, m) { return a + m.points; }, 0);
    var effective = married - s.pending_points;
    var pts = el("span", "points");
    pts.appendChild(el("b", null, String(s.points)));
    pts.appendChild(document.createTextNode(" points"));
    t.appendChild(pts);
    if (effective > 0) { t.appendChild(el("span", "married", " (" + effective + " from marriages)")); }
    if (s.pending_points > 0) {
      t.appendChild(el("span", "pending", " +" + s.pending_points + " pending: counts once you win a trick"));
    }
    t.appendChild(el("span", "tricks", " · " + s.tricks_won + " trick" + (s.tricks_won === 1 ? "" : "s")));
  }

  function drawFelt() {
    var s = state, stock = clear(byId("stockarea"));
    // the trump card: upright, readable, labelled
    var trump = el("div", "trumpbox");
    if (s.trump_card) { trump.appendChild(cards.trumpFace(s.trump_card, s.trump_face_up)); }
    var where = !s.trump_card || s.trump_face_up ? ""
      : s.closed_by !== null ? " (turned down: out of play, R6.2)" : " (taken on the last draw, R3.3)";
    trump.appendChild(el("span", "caption", "trump " + SUITS[s.trump_suit] + " " + SUIT_NAMES[s.trump_suit] + where));
    stock.appendChild(trump);
    var pile = el("div", "ppile");
    if (s.stock_size > 0 && s.closed_by === null) {
      var back = el("span", "pcard back stockpile");
      back.appendChild(el("span", "count", String(s.stock_size)));
      pile.appendChild(back);
    }
    var words = s.closed_by !== null ? "stock closed by " + (s.closed_by === you() ? "you" : s.names[s.closed_by])
      : s.stock_size === 0 ? "stock exhausted" : "stock " + s.stock_size + " (trump card included)";
    pile.appendChild(el("span", "caption", words));
    stock.appendChild(pile);
    // the trick under way, or the one just taken for a moment
    var trick = clear(byId("trick"));
    var count = s.tricks.length;
    var justTaken = shownTricks !== null && count > shownTricks && !s.lead_card;
    if (s.lead_card) {
      var lead = el("div", "played");
      lead.appendChild(cardFace(s.lead_card));
      lead.appendChild(el("span", "caption", (s.leader === you() ? "you led" : s.names[s.leader] + " led")));
      trick.appendChild(lead);
    } else if (justTaken && s.last_trick) {
      showTaken(trick, s.last_trick);
    }
    shownTricks = count;
    if (!justTaken) { drawFeltLast(); }
  }

  function showTaken(trick, t) {
    var box = el("div", "taken");
    box.appendChild(cardFace(t.lead)); box.appendChild(cardFace(t.follow));
    box.appendChild(el("span", "caption", (t.winner === you() ? "you take" : state.names[t.winner] + " takes") + " the trick"));
    trick.appendChild(box);
    if (lastTrickTimer) { window.clearTimeout(lastTrickTimer); }
    lastTrickTimer = window.setTimeout(function () {
      lastTrickTimer = null;
      if (box.parentNode) { box.parentNode.removeChild(box); }
      shownTricks = -1; drawFeltLast();
    }, 1500);
  }
  function drawFeltLast() {
    var s = state, last = clear(byId("lasttrick"));
    shownTricks = s.tricks.length;
    if (s.last_trick) {
      last.appendChild(el("span", "caption", "last trick, " + (s.last_trick.winner === you() ? "yours" : "theirs")));
      var pair = el("span", "pair"), a = cardFace(s.last_trick.lead), b = cardFace(s.last_trick.follow);
      a.classList.add("mini"); b.classList.add("mini");
      pair.appendChild(a); pair.appendChild(b);
      last.appendChild(pair);
    }
  }

  function legal(text) { return state.legal.indexOf(text) >= 0; }

  function drawHand() {
    var hand = clear(byId("hand"));
    state.hand.forEach(function (card, i) {
      var ok = legal("play " + card);
      var b = cards.handCard(card, ok, function () { intend("play " + card); });
      if (busy) { b.disabled = true; }
      b.dataset.key = String(i + 1);
      b.setAttribute("aria-label", b.title + (ok ? "" : " (not playable now)") + " — key " + (i + 1));
      hand.appendChild(b);
    });
  }

  function button(text, action, cls, key) {
    var b = el("button", "act " + (cls || ""), text);
    b.type = "button";
    b.dataset.action = action;
    if (key) { b.dataset.key = key; b.appendChild(el("kbd", null, key)); }
    b.disabled = busy;
    b.addEventListener("click", function () { intend(action); });
    return b;
  }

  function drawActions() {
    var s = state, bar = clear(byId("actions"));
    if (legal("exchange")) { bar.appendChild(button("Exchange the trump jack for " + RANKS[s.trump_card[0]] + SUITS[s.trump_card[1]], "exchange", "", "E")); }
    s.legal.filter(function (a) { return a.indexOf("declare ") === 0; }).forEach(function (a, i) {
      var suit = a.slice(-1), points = suit === s.trump_suit ? 40 : 20;
      var how = s.profile === "sharp" ? "then lead the king" : "then lead the king or queen";
      bar.appendChild(button("Marriage " + points + " in " + SUITS[suit] + " (" + how + ")", a, "marriage", i === 0 ? "M" : null));
    });
    if (legal("close")) { bar.appendChild(button("Close the stock", "close", "", "C")); }
    if (legal("claim")) {
      var good = s.claim_good, b = button(s.claim_hint ? (good ? "Claim 66: you have " + s.points : "Claim 66 (you have " + s.points + ": not enough)")
        : "Claim 66 (count yourself: sharp)", "claim", good ? "claim lit" : "claim unlit", "A");
      b.setAttribute("aria-pressed", "false");
      bar.appendChild(b);
    }
    var marriage = s.marriages.filter(function (m) { return m.seat === you() && m.trick === s.tricks.length; })[0];
    if (marriage && s.to_act === you() && !s.lead_card) {
      bar.appendChild(el("span", "hint", "You declared " + SUITS[marriage.suit] + ": lead its " +
                         (s.profile === "sharp" ? "king" : "king or queen") + "."));
    }
  }

  function clockText(seat) {
    var s = state;
    if (s.state !== "running") { return ""; }
    var bank = s.bank_left_ms[seat];
    if (s.on_clock === seat && s.deadline) {
      var left = Date.parse(s.deadline) - (Date.now() + offset);
      return secs(left) + " left";
    }
    return bank !== undefined ? "bank " + secs(bank) : "";
  }
  function tick() {
    ["you", "them"].forEach(function (who) {
      var seat = who === "you" ? you() : them(), c = byId(who + "-clock");
      c.textContent = clockText(seat);
      c.classList.toggle("running", state.on_clock === seat && state.state === "running");
      var left = state.deadline ? Date.parse(state.deadline) - (Date.now() + offset) : Infinity;
      c.classList.toggle("low", state.on_clock === seat && left < 10000);
    });
  }

  function drawStatus() {
    var s = state, st = byId("status");
    st.className = "pstatus";
    if (s.state !== "running") {
      var r = s.result || {};
      var last = s.hands.length ? s.hands[s.hands.length - 1] : null;
      var why = r.reason === "played out" && last
        ? "the last hand: " + (last.winner === you() ? "you" : s.names[last.winner]) + " won " + last.game_points +
          " game point" + (last.game_points === 1 ? "" : "s") + ", " + last.why
        : r.reason + (r.detail ? ": " + r.detail : "");
      var text = r.winner === null || r.winner === undefined ? "The match is over: " + why
        : (r.winner === you() ? "You won the Bummerl" : s.names[r.winner] + " won the Bummerl") +
          (r.schneider ? " (Schneider: the loser scored no game point)" : "") + " — " + why;
      st.textContent = text;
      st.classList.add("final");
      return;
    }
    var onClock = s.on_clock === you() ? "You are" : s.names[s.on_clock] + " is";
    if (s.to_act === you()) {
      st.textContent = "Your turn" + (s.lead_card ? ": answer the lead" : ": lead a card") + ". You are on the clock.";
      st.classList.add("yours");
    } else {
      st.textContent = s.names[them()] + " to act — " + onClock.replace("You are", "you are") + " on the clock" +
        (s.opponent_connected ? "." : ". " + s.names[them()] + " is not connected: if it does not come back and act before its time runs out (" + new Date(s.deadline).toLocaleTimeString() + "), it forfeits the match.");
    }
  }

  function drawResults() {
    var s = state, box = clear(byId("results"));
    if (s.hands.length) {
      var list = el("ol", "handresults");
      list.start = 1;
      s.hands.forEach(function (h) {
        var who = h.winner === you() ? "you" : s.names[h.winner];
        var li = el("li", h.winner === you() ? "won" : "lost",
          "Hand " + (h.number + 1) + ": " + who + " won " + h.game_points + " game point" + (h.game_points === 1 ? "" : "s") +
          " — " + h.why + "; points " + h.points[you()] + " (you) : " + h.points[them()] +
          ", tricks " + h.tricks[you()] + " : " + h.tricks[them()]);
        list.appendChild(li);
      });
      box.appendChild(el("h3", null, "Hands"));
      box.appendChild(list);
    }
    var row = clear(byId("resign-row"));
    if (s.can_resign) {
      var b = el("button", "resign", "Resign this casual game");
      b.type = "button";
      b.addEventListener("click", function () {
        if (window.confirm("Resign? " + s.names[them()] + " wins the match.")) { send(root.dataset.resignUrl, {}); }
      });
      row.appendChild(b);
    } else if (s.state === "running" && s.rated) {
      row.textContent = "Rated games cannot be resigned: if you leave, your clock runs out and you forfeit.";
    }
  }

  function drawFairness() {
    var s = state, box = clear(byId("fairness"));
    box.appendChild(el("h3", null, "Is the deal fair?"));
    var p = el("p");
    p.appendChild(document.createTextNode("Commitment to this match's deals (SHA-256 of the seed, fixed before the first card): "));
    p.appendChild(el("code", "commitment", s.commitment));
    box.appendChild(p);
    if (s.seed !== null) {
      var q = el("p");
      q.appendChild(document.createTextNode("Seed: "));
      q.appendChild(el("code", "seed", s.seed));
      q.appendChild(document.createTextNode(". Check it: the hash of the seed is the commitment, and the record re-deals and replays:"));
      box.appendChild(q);
      box.appendChild(el("pre", "replay-command",
        "python3 -c 'import hashlib; print(hashlib.sha256(b\"" + s.seed + "\").hexdigest())'\n" +
        "curl -s '" + root.dataset.exportUrl + "' > match-" + s.match_id + ".jsonl\n" +
        "bummerl replay match-" + s.match_id + ".jsonl"));
    } else {
      box.appendChild(el("p", "hint", "The seed is shown when the match is over, with the command to check it."));
    }
  }

  // --- intents -----------------------------------------------------------------------------
  function refuse(message) { byId("refusal").textContent = message || ""; }

  function send(url, body) {
    busy = true; drawHand(); drawActions();
    return fetch(url, {method: "POST", credentials: "same-origin",
                       headers: {"Content-Type": "application/json", "X-CSRFToken": root.dataset.csrf},
                       body: JSON.stringify(body)})
      .then(function (r) { return r.json().then(function (d) { return {ok: r.ok, data: d}; }); })
      .then(function (a) {
        busy = false;
        // the table after the action, unless a newer one came meanwhile (the stream can bring
        // the opponent's answer before this reply arrives: the older table would hide it)
        if (a.ok) { refuse(""); if (newer(a.data)) { state = a.data; } draw(); }
        else { refuse("Refused: " + (a.data.error || "the server said no")); return load(); }
      })
      .catch(function () { busy = false; refuse("The server does not answer; retrying…"); return load(); });
  }

  // whether table `d` is as new as the one drawn or newer (seqs only grow; the end of a match
  // may come without a new seq, on time): an answer that left before a pushed table is older
  function newer(d) { return d.seq > state.seq || (d.seq === state.seq && (state.state === "running" || d.state !== "running")); }

  function intend(action) {
    if (busy || state.state !== "running" || !legal(action)) { return; }
    send(root.dataset.actUrl, {action: action, seq: state.seq,
                               request_id: (window.crypto && crypto.randomUUID) ? crypto.randomUUID() : String(Math.random()).slice(2)});
  }

  var loading = null;
  function load() {
    if (loading) { return loading; }
    loading = fetch(root.dataset.stateUrl, {credentials: "same-origin"})
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (d) {
        loading = null;
        if (!d || !newer(d)) { return; }
        if (d.seq !== state.seq || d.state !== state.state || d.on_clock !== state.on_clock) { state = d; draw(); } else { state = d; tick(); }
      })
      .catch(function () { loading = null; });
    return loading;
  }

  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey || /INPUT|TEXTAREA|SELECT/.test(e.target.tagName)) { return; }
    var k = e.key.toUpperCase();
    var found = root.querySelector('[data-key="' + k + '"]:not([disabled])');
    if (found) { e.preventDefault(); found.click(); }
  });

  // --- live: the event stream says the table changed; the page reloads its state -------------
  var polling = null;
  function poll() { if (!polling) { polling = window.setInterval(load, 2000); } }
  function live() {
    if (!window.EventSource) { poll(); return; }
    if (root.dataset.liveUrl) { pushed(); return; }
    var source = new EventSource(root.dataset.eventsUrl);
    source.addEventListener("open", function () { badge.textContent = "● live"; badge.className = "live"; load(); });
    source.addEventListener("table", function (event) {
      var d = JSON.parse(event.data);
      if (d.seq !== state.seq || d.final) { load(); }
      if (d.final) { source.close(); badge.textContent = "● over"; badge.className = "live over"; }
    });
    source.addEventListener("error", function () {
      if (source.readyState === EventSource.CLOSED) {
        if (state.state === "running") { badge.textContent = "● reloading every 2 s"; badge.className = "live off"; poll(); }
      } else { badge.textContent = "● reconnecting"; badge.className = "live off"; }
    });
  }

  // the socket tier (web.sockets): each event is the whole table, drawn as it comes; the browser
  // resumes a dropped stream from the last seq it saw (Last-Event-ID) and asks for nothing
  function pushed() {
    var source = new EventSource(root.dataset.liveUrl + "&after=" + state.seq);
    source.addEventListener("open", function () { badge.textContent = "● live"; badge.className = "live"; });
    source.addEventListener("table", function (event) {
      var d = JSON.parse(event.data);
      if (!newer(d)) { return; }
      if (d.seq > state.seq || d.state !== state.state) { state = d; draw(); } else { state = d; tick(); }
    });
    source.addEventListener("refused", function (event) {
      source.close(); refuse(JSON.parse(event.data).error); poll();
    });
    source.addEventListener("end", function () {
      source.close();
      if (state.state === "running") { load(); poll(); }  // the session ended: the page says so
      else { badge.textContent = "● over"; badge.className = "live over"; }
    });
    source.addEventListener("error", function () {
      if (source.readyState === EventSource.CLOSED) {  // refused (full, or the ticket): reload
        if (state.state === "running") { badge.textContent = "● reloading every 2 s"; badge.className = "live off"; poll(); }
      } else { badge.textContent = "● reconnecting"; badge.className = "live off"; }
    });
  }

  // a safety net under the stream: while the other seat is to act, reload every 5 s of quiet
  var quietSince = Date.now();
  window.setInterval(function () {
    if (state.state === "running" && state.to_act !== you() && Date.now() - quietSince > (root.dataset.liveUrl ? 30000 : 5000)) {
      quietSince = Date.now(); load();
    }
  }, 1000);
  document.addEventListener("bummerl:table", function () { quietSince = Date.now(); });

  // on a phone the dock (the hand and the buttons) is fixed at the bottom of the screen: the page
  // keeps room for it and scrolls nothing under it (--dock-height in table.css), whatever its
  // height now (one row of buttons or three); once the match is over it is no longer fixed
  var dock = byId("dock");
  function fitDock() {
    var fixed = window.getComputedStyle(dock).position === "fixed";
    document.documentElement.style.setProperty("--dock-height", fixed ? dock.offsetHeight + "px" : "0px");
  }
  document.addEventListener("bummerl:table", function () { window.setTimeout(fitDock, 0); });
  window.addEventListener("resize", fitDock);
  if (window.ResizeObserver) { new ResizeObserver(fitDock).observe(dock); }

  draw();
  fitDock();
  window.setInterval(tick, 100);
  if (state.state === "running") { live(); } else { badge.textContent = "● over"; badge.className = "live over"; }
  window.bummerlTable = {state: function () { return state; }, load: load};
})();
