// The file view: every file a tool produced, as a tree of sub-paths, each with its name, type, size,
// sha256, a download button and a preview where one makes sense. File names and contents are only ever
// set as text (textContent); Markdown is rendered by building elements, never from HTML.

const PREVIEW_TEXT_MAX = 1 << 20; // bytes of a text, CSV or Markdown file fetched for its preview
const PREVIEW_PDF_MAX = 8 << 20;  // bytes of a PDF read to count its pages
const TABLE_ROWS_MAX = 200;

const root = document.getElementById("root");
let byName = new Map(); // filename -> file, for images a Markdown page refers to
let cardOf = new Map(); // filename -> its card, whose preview a Markdown page showing the picture replaces

// filesOf reads the produced files of a CallToolResult: structuredContent ({files: [...]} or one file
// flat), else the resource_link blocks of its content.
function filesOf(result) {
  const files = producedOf(result);
  // Through agentura's gateway the files are saved on the user's machine: its result names each saved copy
  // with a file:// resource_link (and no download URL). The view shows where, and opens it through the host.
  const saved = new Map();
  for (const b of (result && Array.isArray(result.content)) ? result.content : []) {
    if (b && b.type === "resource_link" && fileURL(b.uri)) saved.set(String(b.name), fileURL(b.uri));
  }
  for (const f of files) {
    const base = f.filename.split("/").pop();
    if (!httpURL(f.download_url) && saved.has(base)) f.saved = saved.get(base);
    else if (fileURL(f.download_url)) f.saved = fileURL(f.download_url);
  }
  return files;
}

function producedOf(result) {
  const sc = result && result.structuredContent;
  // A gateway's result keeps the fields but drops download_url (it saved the files).
  const one = (f) => f && typeof f === "object" && typeof f.filename === "string" &&
    (typeof f.download_url === "string" || typeof f.mime_type === "string");
  if (sc && Array.isArray(sc.files)) return sc.files.filter(one);
  if (one(sc)) return [sc];
  const out = [];
  for (const b of (result && Array.isArray(result.content)) ? result.content : []) {
    if (b && b.type === "resource_link" && typeof b.uri === "string") {
      out.push({ download_url: b.uri, filename: String(b.name || b.uri), mime_type: String(b.mimeType || ""),
        size_bytes: typeof b.size === "number" ? b.size : undefined, sha256: b._meta && b._meta.sha256 });
    }
  }
  return out;
}

// tree groups files by the folders of their names ("images/a.png").
function tree(files) {
  const top = { dirs: new Map(), files: [] };
  for (const f of files) {
    const parts = f.filename.split("/").filter((p) => p !== "");
    let node = top;
    for (const dir of parts.slice(0, -1)) {
      if (!node.dirs.has(dir)) node.dirs.set(dir, { dirs: new Map(), files: [] });
      node = node.dirs.get(dir);
    }
    node.files.push({ file: f, base: parts.length ? parts[parts.length - 1] : f.filename });
  }
  return top;
}

function renderTree(node, into) {
  for (const { file, base } of node.files) into.appendChild(card(file, base));
  for (const [dir, child] of node.dirs) {
    const d = el("details", "folder");
    d.open = true;
    d.appendChild(el("summary", "", dir + "/"));
    const kids = el("div", "children");
    renderTree(child, kids);
    d.appendChild(kids);
    into.appendChild(d);
  }
}

function kind(f) {
  const t = String(f.mime_type || "").toLowerCase().split(";")[0].trim();
  const ext = (/\.([a-z0-9]+)$/i.exec(f.filename) || [, ""])[1].toLowerCase();
  if (t.startsWith("image/") && ["png", "jpeg", "gif", "webp", "bmp", "svg+xml", "avif", "x-icon"].includes(t.slice(6))) return "image";
  if (t === "application/pdf" || ext === "pdf") return "pdf";
  if (t === "text/markdown" || ext === "md" || ext === "markdown") return "markdown";
  if (t === "text/csv" || ext === "csv") return "csv";
  if (t === "text/tab-separated-values" || ext === "tsv") return "tsv";
  if (t.startsWith("text/") || t === "application/json" || t.endsWith("+json") || t.endsWith("+xml") || t === "application/xml") return "text";
  return "other";
}

function label(f) {
  const ext = (/\.([a-z0-9]{1,5})$/i.exec(f.filename) || [, ""])[1];
  const byType = { "application/pdf": "PDF",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "DOCX",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": "PPTX",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "XLSX",
    "application/zip": "ZIP" };
  return byType[String(f.mime_type || "").split(";")[0]] || (ext ? ext.toUpperCase() : "FILE");
}

function card(f, base) {
  const c = el("div", "card");
  c.dataset.kind = kind(f);
  const head = el("div", "head");
  const thumb = el("div", "thumb");
  thumb.appendChild(el("div", "icon", label(f)));
  const info = el("div", "info");
  const name = el("div", "name", base);
  name.title = f.filename;
  info.appendChild(name);
  const bits = [String(f.mime_type || "unknown type").split(";")[0]];
  if (typeof f.size_bytes === "number") bits.push(humanSize(f.size_bytes));
  const meta = el("div", "meta muted", bits.join(" · "));
  info.appendChild(meta);
  if (f.sha256) info.appendChild(el("div", "sha mono", "sha256 " + f.sha256));
  const status = el("div", "status muted");
  info.appendChild(status);
  head.append(thumb, info, downloadButton(f, status));
  c.appendChild(head);
  const prev = preview(f, thumb, meta);
  if (prev) c.appendChild(prev);
  cardOf.set(f.filename, c);
  return c;
}

function downloadButton(f, status) {
  const url = httpURL(f.download_url) || f.saved || "";
  const a = el("a", "button", "Download");
  if (!url) {
    a.setAttribute("aria-disabled", "true");
    a.classList.add("secondary");
    a.textContent = "No link";
    return a;
  }
  if (f.saved) {
    a.textContent = "Open";
    const where = el("div", "saved muted", "Saved as " + decodeURIComponent(new URL(f.saved).pathname));
    status.before(where);
  }
  a.href = url;
  a.target = "_blank";
  a.rel = "noopener noreferrer";
  a.addEventListener("click", (ev) => {
    ev.preventDefault();
    app.openLink(url).then(() => { status.textContent = f.saved ? "Opened." : "Download opened."; status.className = "status muted"; },
      (e) => { status.textContent = "Could not open the link: " + e.message; status.className = "status error"; });
  });
  return a;
}

// blocked replaces a preview that could not load (a host that allows no connection to the agent) by a note:
// the card with its link stays.
function blocked(box, why) {
  box.textContent = "";
  box.appendChild(el("div", "muted", "No preview: " + why + ". Use Download."));
}

async function fetchText(f) {
  if (typeof f.size_bytes === "number" && f.size_bytes > PREVIEW_TEXT_MAX) throw new Error("the file is large");
  const r = await fetch(httpURL(f.download_url), { credentials: "omit" });
  if (!r.ok) throw new Error("the agent answered " + r.status);
  return await r.text();
}

function preview(f, thumb, meta) {
  const url = httpURL(f.download_url);
  if (!url) return null;
  const k = kind(f);
  const box = el("div", "preview");
  switch (k) {
    case "image": {
      const img = el("img");
      img.alt = f.filename;
      img.decoding = "async";
      img.addEventListener("load", () => { box.dataset.loaded = "1"; app.reportSize(); });
      img.addEventListener("error", () => blocked(box, "the image could not be loaded here"));
      img.src = url;
      box.appendChild(img);
      const t = el("img");
      t.alt = "";
      t.style.cssText = "width:100%;height:100%;object-fit:cover";
      t.addEventListener("error", () => { thumb.textContent = ""; thumb.appendChild(el("div", "icon", label(f))); });
      t.src = url;
      thumb.textContent = "";
      thumb.appendChild(t);
      return box;
    }
    case "markdown":
    case "text":
    case "csv":
    case "tsv":
      box.appendChild(el("div", "muted", "Loading preview…"));
      fetchText(f).then((text) => {
        box.textContent = "";
        if (k === "markdown") box.appendChild(markdown(text, f.filename));
        else if (k === "csv" || k === "tsv") box.appendChild(table(parseDelimited(text, k === "tsv" ? "\t" : ",")));
        else box.appendChild(el("pre", "", text));
        box.dataset.loaded = "1";
        app.reportSize();
      }, (e) => blocked(box, e.message));
      return box;
    case "pdf":
      pdfPicture(f, url, box, thumb);
      if (typeof f.size_bytes === "number" && f.size_bytes <= PREVIEW_PDF_MAX) {
        fetch(url, { credentials: "omit" }).then((r) => r.ok ? r.arrayBuffer() : Promise.reject(new Error(String(r.status))))
          .then((buf) => {
            const n = pdfPages(buf);
            if (n > 0) { meta.textContent += n === 1 ? " · 1 page" : " · " + n + " pages"; meta.dataset.pages = String(n); }
          }, () => {});
      }
      return box;
    default:
      return null;
  }
}

// pdfPicture shows the first page of a PDF, a PNG the agent renders for the download URL with &preview=1
// (same token, same origin). An agent without the renderer, or a host whose CSP blocks the image, leaves
// the card as it was: its icon, no preview box.
function pdfPicture(f, url, box, thumb) {
  const u = new URL(url);
  u.searchParams.set("preview", "1");
  const img = el("img", "page");
  img.alt = "First page of " + f.filename;
  img.decoding = "async";
  img.addEventListener("load", () => {
    box.dataset.loaded = "1";
    const t = el("img");
    t.alt = "";
    t.style.cssText = "width:100%;height:100%;object-fit:cover;object-position:top";
    t.src = img.src;
    thumb.textContent = "";
    thumb.appendChild(t);
    app.reportSize();
  });
  img.addEventListener("error", () => { box.remove(); app.reportSize(); });
  img.src = u.href;
  box.appendChild(img);
}

// pdfPages counts the page objects of a PDF (/Type /Page, not /Pages): enough for a summary line.
function pdfPages(buf) {
  const s = new TextDecoder("latin1").decode(buf);
  const m = s.match(/\/Type\s*\/Page(?![a-zA-Z])/g);
  return m ? m.length : 0;
}

// parseDelimited parses CSV (RFC 4180 quoting) or TSV into rows, at most TABLE_ROWS_MAX.
function parseDelimited(text, sep) {
  const rows = [];
  let row = [], cell = "", i = 0, q = false;
  while (i < text.length && rows.length < TABLE_ROWS_MAX) {
    const ch = text[i];
    if (q) {
      if (ch === '"' && text[i + 1] === '"') { cell += '"'; i += 2; continue; }
      if (ch === '"') { q = false; i++; continue; }
      cell += ch; i++; continue;
    }
    if (ch === '"' && cell === "") { q = true; i++; continue; }
    if (ch === sep) { row.push(cell); cell = ""; i++; continue; }
    if (ch === "\n" || ch === "\r") {
      row.push(cell); rows.push(row); row = []; cell = "";
      i += (ch === "\r" && text[i + 1] === "\n") ? 2 : 1;
      continue;
    }
    cell += ch; i++;
  }
  if ((cell !== "" || row.length) && rows.length < TABLE_ROWS_MAX) { row.push(cell); rows.push(row); }
  return rows;
}

function table(rows) {
  const t = el("table");
  rows.forEach((r, n) => {
    const tr = el("tr");
    for (const c of r) tr.appendChild(el(n === 0 ? "th" : "td", "", c));
    t.appendChild(tr);
  });
  return t;
}

// markdown renders a safe subset of Markdown: headings, paragraphs, lists, quotes, fenced code, rules,
// tables; emphasis, code, links (opened through the host) and images that are files of this same result
// (images/diagram.png beside page.md). Nothing is fetched from anywhere else and nothing runs.
function markdown(text, pageName) {
  const out = el("div", "md");
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  let i = 0;
  const isBlank = (l) => /^\s*$/.test(l);
  const startsBlock = (l) => /^(#{1,6}\s|```|>|\s*([-*+]|\d+[.)])\s|\s*(\*\s*){3,}$|\s*(-\s*){3,}$|\|)/.test(l);
  while (i < lines.length) {
    const line = lines[i];
    let m;
    if (isBlank(line)) { i++; continue; }
    if ((m = /^(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line))) {
      const h = el("h" + m[1].length);
      inline(m[2], h, pageName);
      out.appendChild(h); i++; continue;
    }
    if (/^```/.test(line)) {
      const code = [];
      i++;
      while (i < lines.length && !/^```/.test(lines[i])) code.push(lines[i++]);
      i++;
      const pre = el("pre");
      pre.appendChild(el("code", "", code.join("\n")));
      out.appendChild(pre); continue;
    }
    if (/^\s*((\*\s*){3,}|(-\s*){3,}|(_\s*){3,})$/.test(line)) { out.appendChild(el("hr")); i++; continue; }
    if (/^>/.test(line)) {
      const q = [];
      while (i < lines.length && /^>/.test(lines[i])) q.push(lines[i++].replace(/^>\s?/, ""));
      const bq = el("blockquote");
      bq.appendChild(markdown(q.join("\n"), pageName));
      out.appendChild(bq); continue;
    }
    if (/^\s*([-*+]|\d+[.)])\s+/.test(line)) {
      const ordered = /^\s*\d/.test(line);
      const list = el(ordered ? "ol" : "ul");
      while (i < lines.length && /^\s*([-*+]|\d+[.)])\s+/.test(lines[i])) {
        const li = el("li");
        inline(lines[i].replace(/^\s*([-*+]|\d+[.)])\s+/, ""), li, pageName);
        list.appendChild(li); i++;
      }
      out.appendChild(list); continue;
    }
    if (/^\|/.test(line) && i + 1 < lines.length && /^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/.test(lines[i + 1])) {
      const cells = (l) => l.trim().replace(/^\|/, "").replace(/\|$/, "").split("|").map((c) => c.trim());
      const t = el("table");
      const head = el("tr");
      for (const c of cells(line)) { const th = el("th"); inline(c, th, pageName); head.appendChild(th); }
      t.appendChild(head);
      i += 2;
      while (i < lines.length && /^\|/.test(lines[i])) {
        const tr = el("tr");
        for (const c of cells(lines[i])) { const td = el("td"); inline(c, td, pageName); tr.appendChild(td); }
        t.appendChild(tr); i++;
      }
      out.appendChild(t); continue;
    }
    const para = [];
    while (i < lines.length && !isBlank(lines[i]) && (para.length === 0 || !startsBlock(lines[i]))) para.push(lines[i++].trim());
    const p = el("p");
    inline(para.join(" "), p, pageName);
    out.appendChild(p);
  }
  return out;
}

// inline appends the inline content of s, a line of the Markdown file page, to parent: `code`, **strong**,
// *em* / _em_, [text](url), ![alt](file). Everything else is text.
function inline(s, parent, page) {
  const re = /(`+)([\s\S]*?)\1|\*\*([^*]+)\*\*|__([^_]+)__|\*([^*\s][^*]*)\*|\b_([^_]+)_\b|!\[([^\]]*)\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)|\[([^\]]+)\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g;
  let last = 0, m;
  while ((m = re.exec(s))) {
    if (m.index > last) parent.appendChild(document.createTextNode(s.slice(last, m.index)));
    last = re.lastIndex;
    if (m[1]) parent.appendChild(el("code", "", m[2]));
    else if (m[3] !== undefined || m[4] !== undefined) { const b = el("strong"); inline(m[3] || m[4], b, page); parent.appendChild(b); }
    else if (m[5] !== undefined || m[6] !== undefined) { const e = el("em"); inline(m[5] || m[6], e, page); parent.appendChild(e); }
    else if (m[8] !== undefined) parent.appendChild(mdImage(m[7], m[8], page));
    else if (m[10] !== undefined) parent.appendChild(mdLink(m[9], m[10], page));
  }
  if (last < s.length) parent.appendChild(document.createTextNode(s.slice(last)));
}

// dirOf is the folder of a file name with its trailing slash ("" at the top).
function dirOf(name) {
  return name.includes("/") ? name.slice(0, name.lastIndexOf("/") + 1) : "";
}

// mdImage shows an image the page refers to when it is a file of this result; anything else (a remote
// image) is named, not fetched. Once it shows, the picture's own card drops its preview (see shownIn).
function mdImage(alt, ref, page) {
  const dir = dirOf(page);
  let target = "";
  try { target = decodeURIComponent(ref); } catch (e) { target = ref; }
  const f = byName.get(dir + target.replace(/^\.\//, "")) || byName.get(target.replace(/^\.\//, ""));
  if (f && kind(f) === "image" && httpURL(f.download_url)) {
    const img = el("img");
    img.alt = alt;
    img.addEventListener("load", () => shownIn(f, page));
    img.addEventListener("error", () => img.replaceWith(el("span", "muted", "[image: " + (alt || target) + "]")));
    img.src = httpURL(f.download_url);
    return img;
  }
  return el("span", "muted", "[image: " + (alt || target) + "]");
}

// shownIn notes on the card of picture f that the Markdown page shows it, and removes the card's own large
// preview: the picture is on screen once, where the page puts it (the card keeps its thumbnail and button).
// A page whose picture did not load leaves the card as it was.
function shownIn(f, page) {
  const c = cardOf.get(f.filename);
  if (!c || c.dataset.shownIn) return;
  c.dataset.shownIn = page;
  const box = c.querySelector(":scope > .preview");
  if (box) box.remove();
  c.querySelector(".status").before(el("div", "shown muted", "Shown in " + page.split("/").pop()));
  app.reportSize();
}

function mdLink(text, ref, page) {
  const dir = dirOf(page);
  const f = byName.get(dir + ref) || byName.get(ref);
  const url = f ? httpURL(f.download_url) : httpURL(ref);
  if (!url) return el("span", "", text);
  const a = el("a");
  inline(text, a, page);
  a.href = url;
  a.rel = "noopener noreferrer";
  a.target = "_blank";
  a.addEventListener("click", (ev) => { ev.preventDefault(); app.openLink(url).catch(() => {}); });
  return a;
}

function show(result) {
  root.textContent = "";
  if (result && result.isError) {
    const msg = (result.content || []).filter((b) => b && b.type === "text").map((b) => b.text).join("\n");
    root.appendChild(el("p", "error", msg || "The tool failed."));
    return;
  }
  const files = filesOf(result);
  byName = new Map(files.map((f) => [f.filename, f]));
  cardOf = new Map();
  if (files.length === 0) {
    root.appendChild(el("p", "muted", "The tool produced no files."));
    return;
  }
  root.appendChild(el("div", "muted", files.length === 1 ? "1 file" : files.length + " files"));
  const list = el("div", "files");
  renderTree(tree(files), list);
  root.appendChild(list);
  document.body.dataset.ready = "1";
  app.reportSize();
}

app.on("ui/notifications/tool-result", show);
app.on("ui/notifications/tool-cancelled", (p) => {
  root.textContent = "";
  root.appendChild(el("p", "muted", "The tool was cancelled" + (p.reason ? ": " + p.reason : ".")));
});
app.start({ name: "agentura-files", version: "1.0.0" }).catch((e) => {
  root.textContent = "";
  root.appendChild(el("p", "error", "This view needs an MCP Apps host: " + e.message));
});
