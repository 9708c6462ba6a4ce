// A code block wider than the page gets a line under it saying so (output blocks wrap instead:
// stylesheets/extra.css). Runs once the page is loaded and again when the window is resized.
(function () {
  function mark() {
    document.querySelectorAll(".md-typeset .highlight pre").forEach(function (pre) {
      var block = pre.closest(".highlight");
      var note = block.nextElementSibling;
      var has = note && note.classList.contains("sdc-scroll-note");
      var code = pre.querySelector("code") || pre;  // Material scrolls the code element, not the pre
      var wide = code.scrollWidth > code.clientWidth + 1;
      if (wide && !has) {
        note = document.createElement("div");
        note.className = "sdc-scroll-note";
        note.textContent = "\u21c6 wider than the page: scroll the block sideways to see the ends of its lines";
        block.insertAdjacentElement("afterend", note);
      } else if (!wide && has) {
        note.remove();
      }
    });
  }
  document.addEventListener("DOMContentLoaded", mark);
  window.addEventListener("resize", mark);
})();
