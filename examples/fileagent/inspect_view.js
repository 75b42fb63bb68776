// inspect_file's view: the structured content (InspectOutput) as a card. Text is set with textContent only
// (el), never as HTML: a file's name is whatever its sender chose.
app.on("ui/notifications/tool-result", (result) => {
  const card = document.getElementById("card");
  card.textContent = "";
  const out = result.structuredContent || {};
  if (result.isError || typeof out.name !== "string") {
    card.appendChild(el("p", "error", "The file could not be inspected."));
    return;
  }
  card.appendChild(el("h1", "", out.name));
  const dl = el("dl");
  for (const [label, value, cls] of [["Type", out.mime_type, ""], ["Size", humanSize(out.size_bytes) + " (" + out.size_bytes + " bytes)", ""], ["SHA-256", out.sha256, "mono"]]) {
    dl.append(el("dt", "", label), el("dd", cls, value));
  }
  card.appendChild(dl);
  document.body.dataset.ready = "1";
});
app.start({ name: "fileagent-inspect", version: "1.0.0" });
