// cardgen gallery, Table view: shuffle (a seed shown and settable), draw, deal, flip, discard, put back, reset,
// and the exact (hypergeometric) odds of drawing what a filter matches. The view, the decks and the seed are kept
// in the address, so a draw can be repeated: index.html#view=table&decks=foes&seed=42
(function () {
  "use strict";
  const section = document.getElementById("table");
  if (!section) return;
  const data = JSON.parse(document.getElementById("table-data").textContent);
  const $ = (id) => document.getElementById(id);
  const seedInput = $("seed");
  const deckBoxes = Array.from(document.querySelectorAll("input[name=table-deck]"));
  // One physical card per copy: {n: its place in the unshuffled deck, card: the card's data}.
  let deck = [];
  let pile = [], play = [], hands = [], discard = [];
  const faceUp = new Set();

  // mulberry32: a 32-bit generator small enough to compute again anywhere (the tests do, in Python).
  function mulberry32(seed) {
    let a = seed >>> 0;
    return function () {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = Math.imul(a ^ (a >>> 15), 1 | a);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  // Fisher-Yates, from the last card down.
  function shuffled(cards, seed) {
    const out = cards.slice();
    const random = mulberry32(seed);
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [out[i], out[j]] = [out[j], out[i]];
    }
    return out;
  }

  // C(n, k) exactly: after step i, r = C(n - k + i, i), a whole number.
  function comb(n, k) {
    if (k < 0 || k > n) return 0n;
    k = Math.min(k, n - k);
    let r = 1n;
    for (let i = 1; i <= k; i++) r = (r * BigInt(n - k + i)) / BigInt(i);
    return r;
  }

  // P(at least k matching cards in n draws from N cards of which K match), exact to 18 digits.
  function atLeast(N, K, n, k) {
    n = Math.min(n, N);
    let hits = 0n;
    for (let i = Math.max(k, 0); i <= Math.min(n, K); i++) hits += comb(K, i) * comb(N - K, n - i);
    const scale = 10n ** 18n;
    return Number((hits * scale) / comb(N, n)) / 1e18;
  }

  function chosenDecks() {
    return deckBoxes.filter((box) => box.checked).map((box) => box.value);
  }

  function gather() {
    const wanted = chosenDecks();
    deck = [];
    for (const card of data.cards) {
      if (!wanted.includes(card.deck)) continue;
      for (let copy = 0; copy < card.copies; copy++) deck.push({ n: deck.length, card: card });
    }
    play = []; hands = []; discard = []; faceUp.clear();
  }

  function seed() {
    const value = Number(seedInput.value);
    return Number.isInteger(value) && value >= 0 ? value >>> 0 : 0;
  }

  function shuffle() {
    gather();
    pile = shuffled(deck, seed());
    render();
  }

  function reset() {
    gather();
    pile = deck.slice();
    render();
  }

  function draw() {
    if (pile.length) {
      const one = pile.shift();
      faceUp.add(one.n);
      play.push(one);
    }
    render();
  }

  function deal() {
    const count = Math.max(1, Math.min(8, Number($("hands").value) || 1));
    const size = Math.max(1, Math.min(30, Number($("hand-size").value) || 1));
    hands = Array.from({ length: count }, () => []);
    for (let round = 0; round < size; round++) {
      for (const hand of hands) if (pile.length) hand.push(pile.shift());
    }
    render();
  }

  // Moves of one card: flip it, discard it, or put it back on top of the draw pile.
  function take(n) {
    for (const zone of [play, discard, ...hands]) {
      const at = zone.findIndex((one) => one.n === n);
      if (at >= 0) return zone.splice(at, 1)[0];
    }
    return null;
  }

  function act(action, n) {
    if (action === "flip") {
      if (faceUp.has(n)) faceUp.delete(n); else faceUp.add(n);
    } else {
      const one = take(n);
      if (!one) return;
      if (action === "discard") { faceUp.add(n); discard.push(one); }
      if (action === "back") { faceUp.delete(n); pile.unshift(one); }
    }
    render();
  }

  function image(src, alt) {
    const img = document.createElement("img");
    img.src = src;
    img.alt = alt;
    return img;
  }

  function cardElement(one, actions) {
    const div = document.createElement("div");
    div.className = "tcard";
    div.dataset.id = one.card.id;
    div.dataset.n = String(one.n);
    const up = faceUp.has(one.n) || !one.card.back;
    div.dataset.face = up ? "up" : "down";
    div.append(image(up ? one.card.face : one.card.back, up ? one.card.name : "back"));
    const bar = document.createElement("div");
    for (const action of actions) {
      const button = document.createElement("button");
      button.textContent = { flip: "Flip", discard: "Discard", back: "Put back" }[action];
      button.dataset.action = action;
      button.addEventListener("click", () => act(action, one.n));
      bar.append(button);
    }
    div.append(bar);
    return div;
  }

  function renderPile(element, cards, title, faceShown) {
    element.replaceChildren();
    element.dataset.order = cards.map((one) => one.card.id).join(" ");
    element.dataset.count = String(cards.length);
    const top = faceShown ? cards[cards.length - 1] : cards[0];
    if (top) element.append(image(faceShown ? top.card.face : top.card.back || top.card.face, title));
    const label = document.createElement("span");
    label.textContent = title + ": " + cards.length;
    element.append(label);
  }

  function renderZone(element, cards, actions) {
    element.replaceChildren(...cards.map((one) => cardElement(one, actions)));
    element.dataset.order = cards.map((one) => one.card.id).join(" ");
  }

  function matches(filter, card) {
    const [key, value] = JSON.parse(filter);
    const have = key === "deck" ? card.deck : key === "name" ? card.name : card.fields[key];
    return have !== undefined && have !== null && String(have) === value;
  }

  function filters() {
    const values = new Map([["deck", new Set()], ["name", new Set()]]);
    for (const card of data.cards) {
      if (!chosenDecks().includes(card.deck)) continue;
      values.get("deck").add(card.deck);
      values.get("name").add(card.name);
      for (const [key, value] of Object.entries(card.fields)) {
        if (value === null || value === "" || typeof value === "object") continue;
        if (!values.has(key)) values.set(key, new Set());
        values.get(key).add(String(value));
      }
    }
    const options = [];
    for (const [key, found] of values) {
      if (found.size > 40 && key !== "name") continue; // a measure with many values is not a filter
      for (const value of Array.from(found).sort()) options.push([key, value]);
    }
    return options;
  }

  function renderFilters() {
    const select = $("odds-filter");
    const kept = select.value;
    select.replaceChildren(...filters().map(([key, value]) => {
      const option = document.createElement("option");
      option.value = JSON.stringify([key, value]);
      option.textContent = key + " = " + (key === "deck" ? data.decks[value] || value : value);
      return option;
    }));
    if (Array.from(select.options).some((o) => o.value === kept)) select.value = kept;
  }

  function renderOdds() {
    const out = $("odds-result");
    const filter = $("odds-filter").value;
    if (!filter) { out.textContent = ""; return; }
    const N = pile.length;
    const K = pile.filter((one) => matches(filter, one.card)).length;
    const n = Math.max(0, Number($("odds-n").value) || 0);
    const k = Math.max(0, Number($("odds-k").value) || 0);
    const p = atLeast(N, K, n, k);
    out.dataset.p = String(p);
    out.dataset.N = String(N);
    out.dataset.K = String(K);
    out.textContent = (100 * p).toFixed(2) + "% (" + K + " of the " + N + " cards in the draw pile match)";
  }

  function render() {
    remember();
    if (section.hidden) return; // the cards view: no table images to load; showing the table draws it
    renderPile($("draw-pile"), pile, "Draw pile", false);
    renderPile($("discard-pile"), discard, "Discard", true);
    renderZone($("in-play"), play, ["flip", "discard", "back"]);
    const zone = $("hands-zone");
    zone.replaceChildren(...hands.map((hand, index) => {
      const box = document.createElement("div");
      box.className = "hand";
      const title = document.createElement("h3");
      title.textContent = "Hand " + (index + 1);
      const cards = document.createElement("div");
      cards.className = "zone";
      renderZone(cards, hand, ["flip", "discard", "back"]);
      box.append(title, cards);
      return box;
    }));
    renderOdds();
  }

  function remember() {
    const params = new URLSearchParams(location.hash.slice(1));
    params.set("view", document.body.classList.contains("view-table") ? "table" : "cards");
    params.set("decks", chosenDecks().join(","));
    params.set("seed", String(seed()));
    history.replaceState(null, "", "#" + params.toString());
  }

  function show(view) {
    document.body.classList.toggle("view-table", view === "table");
    section.hidden = view !== "table";
    $("view-table").setAttribute("aria-pressed", String(view === "table"));
    render();
  }

  // The first state: from the address, else the first deck and a seed of the moment.
  const saved = new URLSearchParams(location.hash.slice(1));
  const decks = (saved.get("decks") || "").split(",").filter(Boolean);
  for (const box of deckBoxes) box.checked = decks.length ? decks.includes(box.value) : box === deckBoxes[0];
  seedInput.value = saved.has("seed") ? saved.get("seed") : String(Date.now() % 4294967296);
  $("view-table").addEventListener("click", () => show(section.hidden ? "table" : "cards"));
  $("shuffle").addEventListener("click", shuffle);
  $("new-seed").addEventListener("click", () => {
    seedInput.value = String(Math.floor(Math.random() * 4294967296));
    shuffle();
  });
  $("draw").addEventListener("click", draw);
  $("deal").addEventListener("click", deal);
  $("reset").addEventListener("click", reset);
  seedInput.addEventListener("change", shuffle);
  for (const box of deckBoxes) box.addEventListener("change", () => { renderFilters(); shuffle(); });
  for (const id of ["odds-filter", "odds-k", "odds-n"]) $(id).addEventListener("input", renderOdds);
  renderFilters();
  shuffle();
  show(saved.get("view") === "table" ? "table" : "cards");
})();
