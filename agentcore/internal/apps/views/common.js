"use strict";
// The view's side of MCP Apps (io.modelcontextprotocol/ui, 2026-01-26): JSON-RPC 2.0 over postMessage
// with the host (window.parent). Hand-written: views are embedded in the agent's binary, with no npm.
const app = (() => {
  const pending = new Map();
  const handlers = new Map();
  let nextId = 1;
  let hostCapabilities = {};
  let hostContext = {};

  function send(msg) { window.parent.postMessage(msg, "*"); }

  window.addEventListener("message", (ev) => {
    if (ev.source !== window.parent) return; // only the host speaks to a view
    const m = ev.data;
    if (!m || typeof m !== "object" || m.jsonrpc !== "2.0") return;
    if (m.method === undefined && m.id !== undefined) {
      const p = pending.get(m.id);
      if (!p) return;
      pending.delete(m.id);
      clearTimeout(p.timer);
      if (m.error) p.reject(new Error(String(m.error.message || "the host refused the request")));
      else p.resolve(m.result || {});
      return;
    }
    if (typeof m.method !== "string") return;
    if (m.id !== undefined) { // a request of the host
      if (m.method === "ui/resource-teardown" || m.method === "ping") send({ jsonrpc: "2.0", id: m.id, result: {} });
      else send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "method not found: " + m.method } });
      return;
    }
    const h = handlers.get(m.method);
    if (h) {
      try { h(m.params || {}); } catch (e) { console.error(m.method, e); }
    }
  });

  function request(method, params, timeoutMs) {
    const id = nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error("the host did not answer " + method));
      }, timeoutMs || 30000);
      pending.set(id, { resolve, reject, timer });
      send({ jsonrpc: "2.0", id, method, params: params || {} });
    });
  }
  function notify(method, params) { send({ jsonrpc: "2.0", method, params: params || {} }); }
  function on(method, fn) { handlers.set(method, fn); }

  // Theme and style variables of the host (hostContext.theme, hostContext.styles.variables).
  function applyContext(ctx) {
    if (!ctx || typeof ctx !== "object") return;
    Object.assign(hostContext, ctx);
    const root = document.documentElement;
    if (ctx.theme === "dark" || ctx.theme === "light") root.dataset.theme = ctx.theme;
    const vars = ctx.styles && ctx.styles.variables;
    if (vars && typeof vars === "object") {
      for (const [k, v] of Object.entries(vars)) {
        if (/^--[a-z0-9-]+$/.test(k) && typeof v === "string") root.style.setProperty(k, v);
      }
    }
  }
  on("ui/notifications/host-context-changed", applyContext);

  // The view's size, for hosts that fit the iframe to it: sent when it changes (ResizeObserver already
  // batches per frame; no timer, as hosts may throttle the timers of a hidden view).
  let lastW = 0, lastH = 0;
  function reportSize() {
    const r = document.documentElement.getBoundingClientRect();
    const w = Math.ceil(r.width), h = Math.ceil(r.height);
    if (w !== lastW || h !== lastH) {
      lastW = w; lastH = h;
      notify("ui/notifications/size-changed", { width: w, height: h });
    }
  }

  // start performs the ui/initialize handshake; handlers registered with on() before it see every
  // notification (the host sends tool-input and tool-result once the view is initialized).
  async function start(appInfo) {
    const res = await request("ui/initialize", {
      appCapabilities: { availableDisplayModes: ["inline"] },
      appInfo,
      protocolVersion: "2026-01-26",
    });
    hostCapabilities = res.hostCapabilities || {};
    applyContext(res.hostContext || {});
    notify("ui/notifications/initialized", {});
    if (window.ResizeObserver) new ResizeObserver(reportSize).observe(document.body);
    reportSize();
    return res;
  }

  // openLink opens url through the host (ui/open-link) when it offers that, else in a new tab.
  async function openLink(url) {
    if (hostCapabilities.openLinks) {
      await request("ui/open-link", { url });
      return;
    }
    const w = window.open(url, "_blank", "noopener,noreferrer");
    if (!w) throw new Error("the host allows no new window: copy the link");
  }

  return { request, notify, on, start, openLink, reportSize,
    get hostCapabilities() { return hostCapabilities; }, get hostContext() { return hostContext; } };
})();

// el makes an element; text is always set as text, never parsed as HTML.
function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

// httpURL returns u when it is an http(s) URL, else "" (no javascript:, data: or other schemes from data).
function httpURL(u) {
  try {
    const p = new URL(String(u));
    return p.protocol === "https:" || p.protocol === "http:" ? p.href : "";
  } catch (e) { return ""; }
}

// fileURL returns u when it is a file: URL (a copy a gateway saved on the user's machine), else "".
function fileURL(u) {
  try {
    const p = new URL(String(u));
    return p.protocol === "file:" ? p.href : "";
  } catch (e) { return ""; }
}

function humanSize(n) {
  if (typeof n !== "number" || !isFinite(n) || n < 0) return "";
  const units = ["B", "KB", "MB", "GB", "TB"];
  let i = 0;
  while (n >= 1000 && i < units.length - 1) { n /= 1000; i++; }
  return (i === 0 ? String(n) : n.toFixed(n < 10 ? 1 : 0)) + " " + units[i];
}
