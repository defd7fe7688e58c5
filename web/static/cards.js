// The cards as the people's pages draw them (web/static/table.js, the table; web/static/exercise.js,
// an exercise): a card's face, its back, a card of one's hand as a button, and the small DOM
// helpers they are built with. Loaded before the page's own script, which takes what it needs
// from window.bummerlCards. Every text goes in with textContent (never as HTML).
(function () {
  "use strict";
  var SUITS = {C: "♣", D: "♦", H: "♥", S: "♠"};
  var SUIT_NAMES = {C: "clubs", D: "diamonds", H: "hearts", S: "spades"};
  var RANKS = {A: "A", T: "10", K: "K", Q: "Q", J: "J"};
  var RANK_NAMES = {A: "ace", T: "ten", K: "king", Q: "queen", J: "jack"};

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) { e.className = cls; }
    if (text !== undefined && text !== null) { e.textContent = text; }
    return e;
  }
  function byId(id) { return document.getElementById(id); }
  function clear(node) { while (node.firstChild) { node.removeChild(node.firstChild); } return node; }
  function red(card) { return card[1] === "H" || card[1] === "D"; }

  // a card face up ("TH": the ten of hearts), named for a screen reader
  function cardFace(card, tag) {
    var c = el(tag || "span", "pcard " + (red(card) ? "red" : "black"));
    c.dataset.card = card;
    c.title = RANK_NAMES[card[0]] + " of " + SUIT_NAMES[card[1]];
    c.setAttribute("aria-label", c.title);
    c.appendChild(el("span", "rank", RANKS[card[0]]));
    c.appendChild(el("span", "suit", SUITS[card[1]]));
    return c;
  }
  // the trump card, upright; "remembered" once it is no longer face up on the table
  function trumpFace(card, faceUp) {
    var face = cardFace(card);
    face.classList.add("trumpcard");
    if (!faceUp) { face.classList.add("remembered"); }
    return face;
  }
  // the opponent's hand: as many backs as it holds
  function backs(node, count) {
    for (var i = 0; i < count; i++) { node.appendChild(el("span", "pcard back")); }
    return node;
  }
  // a card of one's hand: a button, disabled and greyed when it may not be played now
  function handCard(card, playable, onClick) {
    var b = cardFace(card, "button");
    b.type = "button";
    b.disabled = !playable;
    b.classList.add(playable ? "playable" : "unplayable");
    b.addEventListener("click", onClick);
    return b;
  }

  window.bummerlCards = {
    SUITS: SUITS, SUIT_NAMES: SUIT_NAMES, RANKS: RANKS, RANK_NAMES: RANK_NAMES,
    el: el, byId: byId, clear: clear, cardFace: cardFace, trumpFace: trumpFace, backs: backs,
    handCard: handCard
  };
})();
