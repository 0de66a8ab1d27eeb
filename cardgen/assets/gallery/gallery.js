// cardgen gallery: filter by deck, search, guides toggle; under `cardgen serve`, updated after each rebuild.
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

  // Live update: only when served by `cardgen serve`, which pushes its status (Server-Sent Events) after each change:
  // the images a rebuild changed are swapped in place, then the captions, findings and guides are taken from the new
  // page; a rebuild that added or removed cards (or a page that missed a build) loads the page again.
  if (location.protocol !== "http:" && location.protocol !== "https:") return;
  const banner = document.getElementById("banner");
  const served = new WeakMap(); // figure -> the HTML of it last taken from the server
  let refreshing = Promise.resolve();

  function bare(image) {
    return (image.getAttribute("src") || "").split("?")[0];
  }

  function say(text, ok) {
    banner.textContent = text;
    banner.className = ok ? "ok" : "";
    banner.hidden = !text;
  }

  function show(status) {
    const body = document.body;
    if (status.built && status.built !== body.dataset.built) {
      if (status.reload || status.since !== body.dataset.built) {
        location.reload();
        return;
      }
      body.dataset.built = status.built;
      const swapped = [];
      for (const image of document.images) {
        const url = status.changed[bare(image)];
        if (!url) continue;
        image.src = url;
        swapped.push(image.decode().catch(() => null));
      }
      // The rest once the new images show: parsing a long page would hold them up.
      refreshing = refreshing.then(() => Promise.all(swapped)).then(() => refresh(status)).catch(() => location.reload());
    }
    if (status.error) say("The last save broke the build; this page shows the build before it.\n" + status.error);
    else say(status.building ? "Rebuilding..." : "", true);
  }

  // The new page's text around the images: each figure whose HTML changed takes the new one's children, keeping
  // the image elements it has (loaded, or loading their new version), but the previous images of changed cards.
  async function refresh(status) {
    const response = await fetch(location.pathname, { cache: "no-store" });
    const page = new DOMParser().parseFromString(await response.text(), "text/html");
    if (page.body.dataset.built !== status.built) return; // a newer build is on its way: its news refreshes
    const now = Array.from(document.querySelectorAll("section.deck figure"));
    const fresh = Array.from(page.querySelectorAll("section.deck figure"));
    if (now.length !== fresh.length) throw new Error("the cards changed");
    fresh.forEach((figure, i) => adopt(figure, now[i], status.changed));
    document.querySelector("header h1").replaceWith(document.importNode(page.querySelector("header h1"), true));
    const findings = page.getElementById("findings");
    document.getElementById("findings")?.remove();
    if (findings) document.querySelector("main").prepend(document.importNode(findings, true));
    const data = document.getElementById("table-data");
    if (data) data.textContent = page.getElementById("table-data").textContent;
    apply();
  }

  function adopt(fresh, figure, changed) {
    if (served.get(figure) === fresh.outerHTML) return;
    served.set(figure, fresh.outerHTML);
    const kept = new Map(Array.from(figure.querySelectorAll(".frame img")).map((image) => [bare(image), image]));
    const node = document.importNode(fresh, true);
    for (const image of node.querySelectorAll("img")) {
      const mine = image.closest(".prev") ? null : kept.get(bare(image));
      if (mine) image.replaceWith(mine);
      else if (changed[bare(image)]) image.src = changed[bare(image)];
    }
    figure.className = node.className;
    figure.dataset.search = node.dataset.search;
    figure.replaceChildren(...node.childNodes);
  }

  const events = new EventSource("/__cardgen__/events");
  events.onmessage = (event) => show(JSON.parse(event.data));
  events.onerror = () => say("cardgen serve is not answering; this page updates again once it does.");
})();
