// The cards as the people's pages draw them (web/static/table.js, the table; web/static/exercise.js,
// an exercise): a card's face, its back, a card of one's hand as a button, a card or an action
// named in a line of text (a hint's or an exercise's values), and the small DOM
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

  // a card named in a line of text: "K♥", in its suit's colour, read out as "king of hearts"
  function cardName(card) {
    var c = el("span", "cardname " + (red(card) ? "red" : "black"), RANKS[card[0]] + SUITS[card[1]]);
    c.title = RANK_NAMES[card[0]] + " of " + SUIT_NAMES[card[1]];
    c.setAttribute("aria-label", c.title);
    return c;
  }
  // an action's text ("play KH", "declare H", "exchange", "close", "claim": the service's) in
  // words a player knows, its cards named as cards: "Play K♥", "Marriage K♥ Q♥ (20)",
  // "Exchange J♣ for A♣", "Close the stock", "Claim 66". `where` is the position's state (its
  // trump_suit and trump_card), for a marriage's 20 or 40 and the exchange's cards.
  function actionName(action, where) {
    var span = el("span", "action-name");
    function words(text) { span.appendChild(document.createTextNode(text)); }
    var trumpSuit = where && where.trump_suit, trumpCard = where && where.trump_card;
    if (action.indexOf("play ") === 0 && RANKS[action[5]] && SUITS[action[6]]) {
      words("Play "); span.appendChild(cardName(action.slice(5, 7)));
    } else if (action.indexOf("declare ") === 0 && SUITS[action[8]]) {
      var suit = action[8];
      words("Marriage "); span.appendChild(cardName("K" + suit)); words(" ");
      span.appendChild(cardName("Q" + suit));
      if (trumpSuit) { words(" (" + (suit === trumpSuit ? 40 : 20) + ")"); }
    } else if (action === "exchange" && trumpCard) {
      words("Exchange "); span.appendChild(cardName("J" + trumpCard[1])); words(" for ");
      span.appendChild(cardName(trumpCard));
    } else {
      words({exchange: "Exchange the trump jack", close: "Close the stock", claim: "Claim 66"}[action] || action);
    }
    return span;
  }

  window.bummerlCards = {
    SUITS: SUITS, SUIT_NAMES: SUIT_NAMES, RANKS: RANKS, RANK_NAMES: RANK_NAMES,
    el: el, byId: byId, clear: clear, cardFace: cardFace, trumpFace: trumpFace, backs: backs,
    handCard: handCard, cardName: cardName, actionName: actionName
  };
})();
