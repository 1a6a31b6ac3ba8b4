// Loads the wasm UI; the same module serves the workbench (index.html) and the pet (pet.html).
// If the module cannot start, say so on the page instead of leaving it blank.
import init from "./cairn_ui.js";

function showFailure(what) {
  const box = document.createElement("pre");
  box.className = "boot-failure";
  box.textContent = "Cairn's interface failed to start:\n" + what;
  document.body.appendChild(box);
}
window.addEventListener("error", (e) => showFailure(e.message || String(e)));
init().catch((e) => showFailure(String(e && e.stack ? e.stack : e)));
