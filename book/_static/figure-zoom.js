// The figure viewer. Each figure of a page (a notebook's matplotlib PNG, an architecture diagram's
// SVG) becomes a link to itself; a tap or a click opens it in a full-screen viewer at a size where
// its smallest text is at least 9 CSS px tall, to pan in both directions and pinch-zoom, with
// buttons to zoom in, zoom out, fit the screen and close (Escape and the browser's Back close it
// too). Without JavaScript the link opens the bare image.
//
// The readable size: a PNG drawn at `dpi` dots per inch with fonts of at least 7 pt has text of at
// least 7 * dpi / 72 image pixels (9.7 at 100 dpi), so it is readable at one CSS px per image pixel
// (`data-text-px` where the site knows better); an SVG diagram carries `data-text-px`, its smallest
// text in CSS px at its natural size, written by book/_ext/offline_site.py from the file.
(() => {
  const READABLE_PX = 9.5;
  const ZOOM_STEP = 1.25;

  function figures() {
    return [...document.querySelectorAll(
      "article.bd-article div.cell_output img, article.bd-article img[data-text-px]," +
      " article.bd-article img[src*='_images/']"
    )].filter((image) => image.src && !image.closest("div.atb-figure") &&
      !image.closest("div[id^='bertviz-']"));
  }

  // the width (CSS px) at which the figure's smallest text is READABLE_PX tall or more
  function readableWidth(image) {
    const natural = image.naturalWidth || image.width;
    const textPx = parseFloat(image.dataset.textPx || "0");
    if (textPx > 0 && textPx < READABLE_PX) {
      return natural * READABLE_PX / textPx;
    }
    return natural;
  }

  let viewer = null;
  let opener = null;
  let pushed = false;

  function build() {
    viewer = document.createElement("div");
    viewer.className = "figure-viewer";
    viewer.setAttribute("role", "dialog");
    viewer.setAttribute("aria-modal", "true");
    viewer.hidden = true;
    viewer.innerHTML =
      '<div class="figure-viewer__bar">' +
      '<button type="button" data-zoom="out" aria-label="zoom out">−</button>' +
      '<button type="button" data-zoom="fit" aria-label="fit the screen">fit</button>' +
      '<button type="button" data-zoom="in" aria-label="zoom in">+</button>' +
      '<button type="button" data-zoom="close" aria-label="close the figure">✕</button>' +
      "</div>" +
      '<div class="figure-viewer__stage"><img alt=""></div>';
    document.body.appendChild(viewer);
    viewer.querySelector(".figure-viewer__bar").addEventListener("click", (event) => {
      const button = event.target.closest("button");
      if (!button) {
        return;
      }
      const image = viewer.querySelector("img");
      const stage = viewer.querySelector(".figure-viewer__stage");
      const width = image.getBoundingClientRect().width;
      const action = button.dataset.zoom;
      if (action === "close") {
        close();
      } else if (action === "fit") {
        setWidth(Math.min(readableWidth(opener.image), stage.clientWidth - 16));
      } else {
        setWidth(action === "in" ? width * ZOOM_STEP : width / ZOOM_STEP);
      }
    });
    viewer.addEventListener("keydown", (event) => {
      if (event.key === "Escape") {
        close();
      } else if (event.key === "Tab") {  // keep the focus inside the dialog
        const buttons = [...viewer.querySelectorAll("button")];
        const index = buttons.indexOf(document.activeElement);
        const next = (index + (event.shiftKey ? -1 : 1) + buttons.length) % buttons.length;
        buttons[next].focus();
        event.preventDefault();
      }
    });
    window.addEventListener("popstate", () => {
      if (pushed) {
        pushed = false;
        close();
      }
    });
  }

  function setWidth(width) {
    const image = viewer.querySelector("img");
    image.style.width = `${Math.max(80, Math.round(width))}px`;
    image.style.maxWidth = "none";
  }

  function open(link, image) {
    if (!viewer) {
      build();
    }
    opener = {link, image};
    const shown = viewer.querySelector("img");
    shown.src = image.currentSrc || image.src;
    shown.alt = image.alt || "";
    shown.dataset.textPx = image.dataset.textPx || "";
    viewer.setAttribute("aria-label", image.alt ? `figure: ${image.alt.slice(0, 120)}` : "figure");
    setWidth(readableWidth(image));
    viewer.hidden = false;
    document.documentElement.classList.add("figure-viewer-open");
    viewer.querySelector(".figure-viewer__stage").scrollTo(0, 0);
    viewer.querySelector("button[data-zoom='close']").focus();
    if (!pushed) {
      history.pushState({figureViewer: true}, "");
      pushed = true;
    }
  }

  function close() {
    if (!viewer || viewer.hidden) {
      return;
    }
    viewer.hidden = true;
    document.documentElement.classList.remove("figure-viewer-open");
    if (pushed) {
      pushed = false;
      history.back();
    }
    if (opener) {
      opener.link.focus();
    }
  }

  window.addEventListener("DOMContentLoaded", () => {
    figures().forEach((image) => {
      let link = image.closest("a");
      if (link && !link.classList.contains("figure-zoom") &&
          link.getAttribute("href") !== image.getAttribute("src")) {
        return;  // an image that links elsewhere keeps its link
      }
      if (!link) {
        link = document.createElement("a");
        link.href = image.src;
        image.parentNode.insertBefore(link, image);
        link.appendChild(image);
      }
      link.classList.add("figure-zoom");
      link.title = "open the figure in the viewer (zoom, pan)";
      link.addEventListener("click", (event) => {
        if (event.ctrlKey || event.metaKey || event.shiftKey) {
          return;  // a new tab or window: the bare image
        }
        event.preventDefault();
        open(link, image);
      });
    });
  });
})();
