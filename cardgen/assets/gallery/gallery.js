// cardgen gallery: filter by deck, search, guides toggle; under `cardgen serve`, reload after each rebuild.
(function () {
  "use strict";
  const deck = document.getElementById("deck");
  const search = document.getElementById("search");
  const guides = document.getElementById("guides");
  const changedOnly = document.getElementById("changed-only");
  const count = document.getElementById("count");
  const figures = Array.from(document.querySelectorAll("figure.card"));

  function apply() {
    const wanted = deck.value;
    const words = search.value.toLowerCase().split(/\s+/).filter(Boolean);
    let shown = 0;
    for (const figure of figures) {
      const visible = (!wanted || figure.dataset.deck === wanted) &&
        words.every((w) => figure.dataset.search.includes(w)) &&
        (!changedOnly.checked || figure.classList.contains("changed") || figure.classList.contains("added"));
      figure.hidden = !visible;
      if (visible) shown += 1;
    }
    for (const section of document.querySelectorAll("section.deck")) {
      section.hidden = !section.querySelector("figure.card:not([hidden])");
    }
    count.textContent = shown + " of " + figures.length + " cards";
    document.body.classList.toggle("show-guides", guides.checked);
    const state = { deck: wanted, q: search.value, guides: guides.checked ? 1 : 0, changed: changedOnly.checked ? 1 : 0 };
    const params = new URLSearchParams(location.hash.slice(1)); // the Table view keeps its own keys there
    for (const [key, value] of Object.entries(state)) params.set(key, String(value));
    history.replaceState(null, "", "#" + params.toString());
  }

  // The view (deck, search, guides) is kept in the address, so a reload keeps it.
  const saved = new URLSearchParams(location.hash.slice(1));
  if (saved.has("deck")) deck.value = saved.get("deck");
  if (saved.has("q")) search.value = saved.get("q");
  if (saved.has("guides")) guides.checked = saved.get("guides") === "1";
  if (saved.has("changed")) changedOnly.checked = saved.get("changed") === "1";
  for (const control of [deck, search, guides, changedOnly]) control.addEventListener("input", apply);
  apply();

  // Say on the page which images failed to load (a card image missing from the build shows at once).
  window.addEventListener("load", () => {
    const images = Array.from(document.images);
    const broken = images.filter((image) => !image.complete || image.naturalWidth === 0);
    document.body.dataset.imagesLoaded = String(images.length - broken.length);
    document.body.dataset.imagesBroken = broken.map((image) => image.getAttribute("src")).join(" ");
  });

  // Live reload: only when served by `cardgen serve` (it answers /__cardgen__/status).
  if (location.protocol !== "http:" && location.protocol !== "https:") return;
  const banner = document.getElementById("banner");
  const built = document.body.dataset.built;
  async function poll() {
    try {
      const response = await fetch("/__cardgen__/status?game=" + encodeURIComponent(document.body.dataset.game),
                                   { cache: "no-store" });
      const status = await response.json();
      if (status.error) {
        banner.className = "";
        banner.textContent = "The last save broke the build; this page shows the build before it.\n" + status.error;
        banner.hidden = false;
      } else if (status.building) {
        banner.textContent = "Rebuilding...";
        banner.className = "ok";
        banner.hidden = false;
      } else if (status.built && status.built !== built) {
        location.reload();
        return;
      } else {
        banner.hidden = true;
      }
    } catch (e) {
      banner.textContent = "cardgen serve has stopped; this page no longer updates.";
      banner.hidden = false;
      return;
    }
    setTimeout(poll, 500);
  }
  poll();
})();
