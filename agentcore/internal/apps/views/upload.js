// The upload view: files dropped or picked here go straight to the agent with tus 1.0 (creation, core):
// a small client written here, as the views carry no third-party code. A dropped connection is resumed from
// the offset the agent confirms (HEAD), and so is a file dropped again on a reloaded view when the view has
// storage (below). The model receives, with ui/update-model-context, each file's name and its reference (the
// file URI without token the agent answers in X-File-Uri), never the signed File-Url: that is a bearer
// capability, and it stays with the view.

const CHUNK = 16 << 20;          // bytes per PATCH
const RETRY_MAX = 40;            // attempts per file after a failure
const RETRY_PAUSE_MAX = 8000;    // ms between attempts, at most

let cap = null;                  // transfer.UploadCapability from attach_file's result _meta
const queue = [];                // files waiting for the capability
const attached = [];             // {name, uri, size_bytes, mime_type}: what the model is told

const list = document.getElementById("list");
const drop = document.getElementById("drop");
const picker = document.getElementById("picker");

function b64utf8(s) {
  const bytes = new TextEncoder().encode(s);
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

// xhr sends one request; it resolves with the XMLHttpRequest once answered (any status) and rejects on a
// network failure. onProgress gets the bytes of the body sent so far.
function xhr(method, url, headers, body, onProgress) {
  return new Promise((resolve, reject) => {
    const x = new XMLHttpRequest();
    x.open(method, url);
    x.timeout = 120000;
    for (const [k, v] of Object.entries(headers)) x.setRequestHeader(k, v);
    x.setRequestHeader("Tus-Resumable", "1.0.0");
    x.setRequestHeader("X-Upload-Capability", cap.token);
    if (onProgress) x.upload.onprogress = (e) => onProgress(e.loaded);
    x.onload = () => resolve(x);
    x.onerror = () => reject(new Error("the connection to the agent failed"));
    x.ontimeout = () => reject(new Error("the agent did not answer in time"));
    x.onabort = () => reject(new Error("aborted"));
    x.send(body === undefined ? null : body);
  });
}

function errorOf(x) {
  try { const j = JSON.parse(x.responseText); if (j && j.error) return j.error; } catch (e) {}
  return "the agent answered " + x.status;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// saved remembers the tus URL of each unfinished upload, keyed by the agent's endpoint and the file's name,
// size and last change, so that a view reloaded mid-upload resumes the file dropped again. It needs the
// view's localStorage: a host that sandboxes the view with allow-scripts alone gives it an opaque origin,
// without storage, and an upload then starts again after a reload. Only the URL is kept, never the
// capability: the URL alone uploads nothing.
const saved = (() => {
  let s = null;
  try {
    s = window.localStorage;
    s.setItem("agentura-probe", "1");
    s.removeItem("agentura-probe");
  } catch (e) {
    s = null;
  }
  const key = (file) => "agentura-tus " + JSON.stringify([cap.endpoint, file.name, file.size, file.lastModified]);
  return {
    available: s !== null,
    get(file) { try { return s ? s.getItem(key(file)) : null; } catch (e) { return null; } },
    put(file, url) { try { if (s) s.setItem(key(file), url); } catch (e) {} },
    forget(file) { try { if (s) s.removeItem(key(file)); } catch (e) {} },
  };
})();
document.body.dataset.storage = saved.available ? "1" : "0";

// staged is the file an answer names once the upload is complete: its signed URL (for the view alone) and
// its reference (for the model); null when the answer names none.
function staged(x) {
  const url = x.getResponseHeader("File-Url");
  return url ? { url, ref: x.getResponseHeader("X-File-Uri") || "" } : null;
}

// resumable asks the agent how far the upload at url got: its offset, or the staged file when it is
// complete; null when it is gone (or not this capability's).
async function resumable(url) {
  try {
    const h = await xhr("HEAD", url, {});
    if (h.status !== 200) return null;
    return { offset: Number(h.getResponseHeader("Upload-Offset")) || 0, done: staged(h) };
  } catch (e) {
    return null;
  }
}

// upload sends one file, resuming after failures; it returns the staged file, {url, ref}.
async function upload(file, ui) {
  try {
    const url = await uploadTus(file, ui);
    saved.forget(file);
    return url;
  } catch (e) {
    if (e.final) saved.forget(file);
    throw e;
  }
}

async function uploadTus(file, ui) {
  let location = null, offset = 0, failures = 0;
  const before = saved.get(file);
  const was = before && (await resumable(before));
  if (was && was.done) return was.done;
  if (was) {
    location = before;
    offset = was.offset;
    ui.box.dataset.resumedFrom = String(offset);
    ui.progress(offset, file.size);
  } else {
    if (before) saved.forget(file);
    const meta = "filename " + b64utf8(file.name) + (file.type ? ",filetype " + b64utf8(file.type) : "");
    const created = await xhr("POST", cap.endpoint, { "Upload-Length": String(file.size), "Upload-Metadata": meta });
    if (created.status !== 201) throw new Error(errorOf(created));
    if (staged(created)) return staged(created); // an empty file
    location = new URL(created.getResponseHeader("Location"), cap.endpoint).href;
    saved.put(file, location);
  }
  for (;;) {
    try {
      if (offset < file.size) {
        const end = Math.min(offset + CHUNK, file.size);
        const x = await xhr("PATCH", location, { "Upload-Offset": String(offset), "Content-Type": "application/offset+octet-stream" },
          file.slice(offset, end), (n) => ui.progress(offset + n, file.size));
        if (x.status === 204) {
          offset = Number(x.getResponseHeader("Upload-Offset"));
          ui.progress(offset, file.size);
          const done = staged(x);
          if (done) return done;
          failures = 0;
          continue;
        }
        if (x.status !== 409 && x.status < 500 && x.status !== 429) throw Object.assign(new Error(errorOf(x)), { final: true });
        throw new Error(errorOf(x));
      }
      // Complete, but the answer naming the file was lost: HEAD names it.
      throw new Error("the completing answer was lost");
    } catch (e) {
      if (e.final || ++failures > RETRY_MAX) throw e;
      ui.state("Connection lost — resuming…");
      await sleep(Math.min(RETRY_PAUSE_MAX, 500 * 2 ** Math.min(failures, 5)));
      try {
        const h = await xhr("HEAD", location, {});
        if (h.status === 200) {
          const done = staged(h);
          if (done) return done;
          offset = Number(h.getResponseHeader("Upload-Offset")) || 0;
          ui.progress(offset, file.size);
          ui.resumed();
        } else if (h.status === 404 || h.status === 410 || h.status === 403) {
          throw Object.assign(new Error(errorOf(h)), { final: true });
        }
      } catch (he) {
        if (he.final) throw he;
      }
    }
  }
}

function item(file) {
  const box = el("div", "item");
  const row = el("div", "row");
  const state = el("span", "state muted", "Waiting…");
  row.append(el("span", "fname", file.name), state);
  const bar = el("div", "bar");
  const fill = el("div");
  bar.appendChild(fill);
  box.append(row, el("div", "muted", humanSize(file.size) + (file.type ? " · " + file.type : "")), bar);
  list.appendChild(box);
  app.reportSize();
  return {
    box,
    progress(done, total) {
      const pct = total > 0 ? Math.floor((done / total) * 100) : 100;
      fill.style.width = pct + "%";
      box.dataset.progress = String(pct);
      state.textContent = pct + " %";
    },
    state(text) { state.textContent = text; },
    resumed() { box.dataset.resumed = String(Number(box.dataset.resumed || 0) + 1); },
  };
}

// tellModel names the attached files to the model: name, size, type and reference. A file the agent gave no
// reference for (an agent without one) is named alone, and the model is told it cannot pass it on.
async function tellModel() {
  const lines = attached.map((f) => "- " + f.name + " (" + humanSize(f.size_bytes) + (f.mime_type ? ", " + f.mime_type : "") + "): " +
    (f.uri || "no reference: ask the user to attach it again"));
  await app.request("ui/update-model-context", {
    content: [{ type: "text", text: "The user attached these files. To give one to a tool, pass its name and, as the content, " +
      "its mcp-file:// URI:\n" + lines.join("\n") }],
    structuredContent: { attached },
  }).catch((e) => console.warn("the host did not take the model context:", e.message));
}

async function start(file) {
  const ui = item(file);
  if (cap.max_bytes > 0 && file.size > cap.max_bytes) {
    ui.box.classList.add("failed");
    ui.state("Too large: the agent takes files up to " + humanSize(cap.max_bytes));
    return;
  }
  try {
    ui.state("Uploading…");
    const done = await upload(file, ui);
    ui.progress(file.size, file.size);
    ui.box.classList.add("done");
    ui.box.dataset.url = done.url;
    ui.box.dataset.ref = done.ref;
    ui.state("Attached");
    attached.push({ name: file.name, uri: done.ref, size_bytes: file.size, mime_type: file.type || "" });
    await tellModel();
  } catch (e) {
    ui.box.classList.add("failed");
    ui.state("Failed: " + e.message);
  }
  app.reportSize();
}

function take(files) {
  for (const f of files) {
    if (cap) start(f); else queue.push(f);
  }
}

drop.addEventListener("dragover", (ev) => { ev.preventDefault(); drop.classList.add("over"); });
drop.addEventListener("dragleave", () => drop.classList.remove("over"));
drop.addEventListener("drop", (ev) => {
  ev.preventDefault();
  drop.classList.remove("over");
  if (ev.dataTransfer && ev.dataTransfer.files) take([...ev.dataTransfer.files]);
});
picker.addEventListener("change", () => { take([...picker.files]); picker.value = ""; });

app.on("ui/notifications/tool-input", (p) => {
  const note = p.arguments && p.arguments.note;
  if (typeof note === "string" && note) document.getElementById("note").textContent = note;
});
app.on("ui/notifications/tool-result", (result) => {
  const c = result && result._meta && result._meta["agentura/upload"];
  if (!c || typeof c.token !== "string" || !httpURL(c.endpoint)) {
    document.getElementById("limit").textContent = "This result carries no upload capability: ask the agent again.";
    return;
  }
  cap = { endpoint: httpURL(c.endpoint), token: c.token, max_bytes: Number(c.max_bytes) || 0 };
  if (cap.max_bytes) document.getElementById("limit").textContent = "Up to " + humanSize(cap.max_bytes) + " a file";
  document.body.dataset.ready = "1";
  take(queue.splice(0));
});
app.start({ name: "agentura-upload", version: "1.0.0" }).catch((e) => {
  document.getElementById("limit").textContent = "This view needs an MCP Apps host: " + e.message;
});
