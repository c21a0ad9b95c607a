// Each figure a notebook drew (a matplotlib PNG in a cell's output) becomes a link to itself, so a
// reader who taps it on a phone, or clicks it on a laptop, sees it full size with legible labels.
window.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("div.cell_output img").forEach((image) => {
    if (image.closest("a") || image.closest("div.atb-figure") || !image.src) {
      return;
    }
    const link = document.createElement("a");
    link.href = image.src;
    link.className = "figure-zoom";
    link.title = "open the figure full size";
    image.parentNode.insertBefore(link, image);
    link.appendChild(image);
  });
});
