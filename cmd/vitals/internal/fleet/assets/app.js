// The fleet's page: it follows /api/stream (server-sent events), reads
// /api/fleet with the filters at each change, and draws the pods in place.
// Plain JavaScript, no library, nothing loaded from elsewhere; every text
// goes into the page as text (textContent), never as HTML.
"use strict";

(() => {
  const RETRY_MIN_MS = 500; // the first wait before reconnecting; it doubles up to RETRY_MAX_MS
  const RETRY_MAX_MS = 5000;
  const TICK_MS = 5000; // how often the ages are drawn again while nothing changes

  const $ = (id) => document.getElementById(id);
  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  };

  // The columns' names, as the table's head says them (its hints aside):
  // each cell carries its own, which a phone's narrow page shows beside it.
  const LABELS = [...document.querySelectorAll("#pods thead th")].map((th) => th.firstChild.textContent.trim());

  const state = {
    view: null,
    reading: false,
    again: false,
    retry: RETRY_MIN_MS,
    namespaces: new Set(),
    open: new Set(), // the pods whose Events are unfolded
  };

  function ago(iso) {
    if (!iso || iso.startsWith("0001-")) return "";
    const s = Math.max(0, Math.round((Date.now() - new Date(iso).getTime()) / 1000));
    if (s < 60) return s + "s";
    const m = Math.floor(s / 60);
    if (m < 60) return m + "m";
    const h = Math.floor(m / 60);
    if (h < 24) return h + "h" + (m % 60 ? (m % 60) + "m" : "");
    return Math.floor(h / 24) + "d" + (h % 24 ? (h % 24) + "h" : "");
  }

  function timeEl(iso) {
    const t = el("time", "ev-time", ago(iso));
    t.dateTime = iso;
    t.title = new Date(iso).toLocaleString();
    return t;
  }

  // The filters, as the page's query and /api/fleet's.
  function filters() {
    const q = new URLSearchParams();
    for (const [id, key] of [["namespace", "namespace"], ["selector", "selector"], ["status", "status"]]) {
      const v = $(id).value.trim();
      if (v) q.set(key, v);
    }
    return q;
  }

  async function read() {
    if (state.reading) {
      state.again = true;
      return;
    }
    state.reading = true;
    try {
      const q = filters();
      history.replaceState(null, "", q.toString() ? "?" + q : location.pathname);
      const res = await fetch("/api/fleet?" + q, { cache: "no-cache" }); // revalidated: an unchanged view is a 304
      const body = await res.json();
      if (!res.ok) {
        banner(body.error || res.statusText);
      } else {
        banner("");
        state.view = body;
        draw();
      }
    } catch (e) {
      banner("Cannot read /api/fleet: " + e.message);
    } finally {
      state.reading = false;
      if (state.again) {
        state.again = false;
        read();
      }
    }
  }

  function banner(text) {
    $("banner").textContent = text;
    $("banner").hidden = !text;
  }

  function draw() {
    const v = state.view;
    if (!v) return;
    const s = $("summary");
    s.textContent = v.summary.text;
    s.dataset.pods = v.summary.pods;
    s.dataset.ready = v.summary.ready;
    s.dataset.failing = v.summary.failing;
    for (const r of v.pods) {
      if (!state.namespaces.has(r.namespace)) {
        state.namespaces.add(r.namespace);
        const sel = $("namespace");
        const o = el("option", null, r.namespace);
        o.value = r.namespace;
        const after = [...sel.options].slice(1).find((x) => x.value > r.namespace);
        sel.insertBefore(o, after || null);
      }
    }
    const rows = v.pods.map(drawRow);
    $("rows").replaceChildren(...rows);
    $("no-pods").hidden = rows.length > 0;
  }

  function drawRow(r) {
    const key = r.namespace + "/" + r.name;
    const tr = el("tr", "pod");
    tr.dataset.pod = key;
    tr.dataset.status = r.status;
    tr.dataset.ready = r.ready;
    tr.append(el("td", null, r.namespace), el("td", "name", r.name), el("td", null, r.node || "—"));
    const vit = el("td");
    vit.append(el("span", "status status-" + r.status, r.status === "unknown" ? "no condition" : r.status));
    if (r.condition && r.condition.reason) vit.append(el("span", "reason", r.condition.reason));
    tr.append(vit);
    const since = el("td");
    if (r.condition) since.append(timeEl(r.condition.since));
    tr.append(since);
    const created = el("td");
    created.append(timeEl(r.created));
    tr.append(el("td", "ready", r.ready ? "yes" : "no"), el("td", null, String(r.restarts)), created);
    tr.append(drawEvents(key, r));
    const page = el("td", "page");
    const d = el("details");
    d.open = state.open.has("port-forward " + key); // kept open across redraws, as the Events are
    d.addEventListener("toggle", () => (d.open ? state.open.add("port-forward " + key) : state.open.delete("port-forward " + key)));
    d.append(el("summary", null, "port-forward"), el("code", "port-forward", r.portForward));
    const a = el("a", null, r.statusPage);
    a.href = r.statusPage;
    const p = el("p", null, "then open ");
    p.append(a);
    d.append(p);
    page.append(d);
    tr.append(page);
    [...tr.cells].forEach((td, i) => (td.dataset.label = LABELS[i]));
    return tr;
  }

  function drawEvents(key, r) {
    const td = el("td", "events-cell");
    if (r.eventCount === 0) {
      td.append(el("span", "note", "none"));
      return td;
    }
    const d = el("details");
    d.open = state.open.has(key);
    d.addEventListener("toggle", () => (d.open ? state.open.add(key) : state.open.delete(key)));
    const newest = r.events[0];
    const sum = el("summary");
    sum.append(el("span", "ev-reason", newest.reason), " ", timeEl(newest.lastSeen));
    if (r.eventCount > 1) sum.append(el("span", "ev-count", " · " + r.eventCount + " in all"));
    d.append(sum);
    const ol = el("ol", "events");
    for (const e of r.events) {
      const li = el("li", "ev-" + e.type);
      li.dataset.reason = e.reason;
      li.append(el("span", "ev-reason", e.reason), " ");
      if (e.message) li.append(el("span", "ev-message", e.message), " ");
      if (e.count > 1) li.append(el("span", "ev-count", "×" + e.count + " "));
      li.append(timeEl(e.lastSeen));
      ol.append(li);
    }
    d.append(ol);
    td.append(d);
    return td;
  }

  function connect() {
    const conn = $("connection");
    const source = new EventSource("/api/stream");
    source.addEventListener("open", () => {
      state.retry = RETRY_MIN_MS;
    });
    source.addEventListener("change", () => {
      conn.dataset.state = "live";
      conn.textContent = "Live";
      read();
    });
    source.addEventListener("error", () => {
      source.close();
      conn.dataset.state = "lost";
      conn.textContent = "Lost the connection; trying again…";
      setTimeout(connect, state.retry);
      state.retry = Math.min(state.retry * 2, RETRY_MAX_MS);
    });
  }

  // The filters of the page's own query, as a link shared gives them.
  const q = new URLSearchParams(location.search);
  $("selector").value = q.get("selector") || "";
  $("status").value = q.get("status") || "";
  const ns = q.get("namespace");
  if (ns) {
    state.namespaces.add(ns);
    const o = el("option", null, ns);
    o.value = ns;
    $("namespace").append(o);
    $("namespace").value = ns;
  }
  $("namespace").addEventListener("change", read);
  $("status").addEventListener("change", read);
  $("selector").addEventListener("change", read);
  // The ages alone, drawn again: the rows stay as they are (an open
  // port-forward, a selection, the focus), however many there are.
  setInterval(() => {
    for (const t of document.querySelectorAll("time[datetime]")) t.textContent = ago(t.dateTime);
  }, TICK_MS);
  connect();
})();
