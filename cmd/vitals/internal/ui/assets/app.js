// The status page of vitals: it reads /ui/api/status, follows /ui/api/events
// (server-sent events) and updates the page in place. Plain JavaScript, no
// library, nothing loaded from elsewhere; every text goes into the page as
// text (textContent), never as HTML.
"use strict";

(() => {
  const REFRESH_MS = 2000; // how often the checks' results are read again while connected
  const RETRY_MIN_MS = 500; // the first wait before reconnecting; it doubles up to RETRY_MAX_MS
  const RETRY_MAX_MS = 5000;
  const EVENTS_SHOWN = 200; // the newest events the log keeps on the page
  const MARKS_MIN = 30; // a mark is at most a 30th of its strip: one result is not a bar across it

  const $ = (id) => document.getElementById(id);
  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  };

  const state = {
    started: null, // the agent's start, to see that it started again
    shownId: 0, // the last event id the status shown covers
    lastId: 0, // the last event id read from the stream
    source: null,
    lost: false, // the connection was lost at least once
    retry: RETRY_MIN_MS,
    rows: new Map(), // check name → its row's parts
    refreshing: false,
    again: false,
    soon: null,
    details: true,
    stopping: null, // why this agent said it is stopping; null until it does
  };

  // Go's durations ("1.5ms", "2m3s", "250µs") in milliseconds.
  const UNITS = { ns: 1e-6, us: 1e-3, "µs": 1e-3, "μs": 1e-3, ms: 1, s: 1e3, m: 6e4, h: 3.6e6 };
  function duration(s) {
    if (!s) return 0;
    let ms = 0;
    for (const m of s.matchAll(/([0-9.]+)(ns|us|µs|μs|ms|s|m|h)/g)) ms += parseFloat(m[1]) * UNITS[m[2]];
    return s.startsWith("-") ? -ms : ms;
  }

  function formatMs(ms) {
    if (ms < 100) return ms.toFixed(1) + " ms";
    if (ms < 1000) return Math.round(ms) + " ms";
    return (ms / 1000).toFixed(ms < 10000 ? 2 : 1) + " s";
  }

  function ago(ms) {
    const s = Math.max(0, Math.round(ms / 1000));
    if (s < 60) return s + "s";
    const m = Math.floor(s / 60);
    if (m < 60) return m + "m " + (s % 60) + "s";
    const h = Math.floor(m / 60);
    if (h < 24) return h + "h " + (m % 60) + "m";
    return Math.floor(h / 24) + "d " + (h % 24) + "h";
  }

  function clock(iso) {
    const d = new Date(iso);
    const p = (n, w = 2) => String(n).padStart(w, "0");
    return p(d.getHours()) + ":" + p(d.getMinutes()) + ":" + p(d.getSeconds()) + "." + p(d.getMilliseconds(), 3);
  }

  function timeEl(iso, text) {
    const t = el("time", null, text);
    t.dateTime = iso;
    t.title = new Date(iso).toLocaleString();
    return t;
  }

  const ICONS = { pass: "✓", warn: "!", fail: "✕", pending: "…", stopped: "■" };

  // A status as a badge: an icon and the word.
  function badge(status) {
    const b = el("span", "status status-" + status);
    const icon = el("span", "icon", ICONS[status] || "?");
    icon.setAttribute("aria-hidden", "true");
    b.append(icon, el("span", "word", status));
    return b;
  }

  function outcome(r) {
    if (r.undecided) return "pending"; // a run that decided nothing yet
    return !r.ok ? "fail" : r.warn ? "warn" : "pass";
  }

  function resultText(r) {
    let text = clock(r.time) + " · " + outcome(r) + " · " + formatMs(duration(r.duration));
    if (r.output) text += " · " + r.output;
    else if (!state.details) text += " · output withheld";
    const observed = observedText(r);
    if (observed) text += " · observed " + observed;
    return text;
  }

  // observedText is a result's observed value with its unit (a metric
  // condition's value, a certificate's days), or "" when it has none: a
  // number to six significant digits, and no unit for one of unit 1.
  function observedText(r) {
    if (r.observedValue === undefined || r.observedValue === null) return "";
    const v = typeof r.observedValue === "number" ? String(+r.observedValue.toPrecision(6)) : String(r.observedValue);
    return r.observedUnit && r.observedUnit !== "1" ? v + " " + r.observedUnit : v;
  }

  // ---- the connection ----

  function setConnection(what, text) {
    const c = $("connection");
    c.dataset.state = what;
    c.textContent = text;
  }

  async function connect() {
    let st;
    try {
      st = await fetchStatus();
    } catch (err) {
      return lost();
    }
    if (state.started !== null && st.started !== state.started) {
      // Another vitals (restarted): its event ids began again.
      state.lastId = 0;
      state.stopping = null;
      for (const row of state.rows.values()) row.eventId = 0;
      clearEvents();
    }
    state.started = st.started;
    render(st);
    const url = "/ui/api/events" + (state.lastId ? "?after=" + state.lastId : "");
    const source = new EventSource(url);
    state.source = source;
    source.onopen = () => {
      state.retry = RETRY_MIN_MS;
      const now = new Date().toLocaleTimeString();
      if (state.lost) setConnection("reconnected", "Live: reconnected at " + now);
      else setConnection("live", "Live");
    };
    source.onmessage = (m) => {
      const e = JSON.parse(m.data);
      state.lastId = e.id;
      onEvent(e);
    };
    source.addEventListener("gap", (m) => {
      // The log dropped events this page had not read: when state changes
      // were among them, read the status anew, from after the gap.
      const g = JSON.parse(m.data);
      state.lastId = g.last;
      if (!g.changes) return;
      source.close();
      state.source = null;
      connect();
    });
    source.onerror = () => {
      // The browser would retry on its own, but not after an answer that is
      // not a stream (a 503): retry here, from the last id read, either way.
      source.close();
      if (state.source === source) lost();
    };
  }

  function lost() {
    state.source = null;
    state.lost = true;
    const wait = state.retry;
    state.retry = Math.min(state.retry * 2, RETRY_MAX_MS);
    setConnection("lost", "Connection lost: retrying in " + Math.ceil(wait / 1000) + "s");
    setTimeout(connect, wait);
  }

  // fetchStatus reads the status, asking whether it changed (the browser
  // sends its ETag and reuses what it has on a 304), and turns each check's
  // results columns back into its history and last result, as
  // GET /v1/checks/NAME writes them.
  async function fetchStatus() {
    const res = await fetch("/ui/api/status", { cache: "no-cache" });
    if (!res.ok) throw new Error("status: HTTP " + res.status);
    const st = await res.json();
    // An unchanged status keeps the time it was taken at; the answer's
    // Date says the server's now, to the second, for "… ago".
    const date = Date.parse(res.headers.get("Date"));
    if (date > Date.parse(st.time)) st.time = new Date(date).toISOString();
    for (const c of st.checks) {
      if (!c.results) continue;
      c.history = expandResults(c.results, Math.floor(duration(c.period) + 1e-6));
      c.last = c.history[c.history.length - 1];
    }
    return st;
  }

  const STATUS_LETTERS = { p: { ok: true }, w: { ok: true, warn: true }, f: { ok: false }, u: { ok: false, undecided: true } };

  // expandResults is a check's results (client/results.go): runs, two or
  // three numbers a result (its start in milliseconds after the previous
  // one's and the period, the first since the epoch; its duration in tenths
  // of a millisecond; its outcome, when there are several), and the
  // outcomes, each written once.
  function expandResults(rs, periodMs) {
    const outcomes = expandOutcomes(rs.outcomes);
    const per = outcomes.length > 1 ? 3 : 2;
    const runs = vlqNumbers(rs.runs);
    const out = [];
    let t = 0;
    for (let i = 0; per * i < runs.length; i++) {
      const run = runs.slice(per * i, per * i + per);
      t += run[0] + (i > 0 ? periodMs : 0);
      const o = outcomes[per === 3 ? run[2] : 0];
      const r = Object.assign({ time: new Date(t).toISOString(), duration: run[1] / 10 + "ms" }, STATUS_LETTERS[o.status]);
      if (o.output) r.output = o.output;
      if (o.unit) r.observedUnit = o.unit;
      if (rs.value && rs.value[i] !== null) r.observedValue = rs.value[i];
      out.push(r);
    }
    return out;
  }

  // expandOutcomes reads outcomes, two items each: the status letter
  // followed by the unit, and the output, whole or as [front, back,
  // middle]: the previous output's first front and last back code points
  // around middle.
  function expandOutcomes(flat) {
    const out = [];
    let prev = [];
    for (let i = 0; i + 1 < flat.length; i += 2) {
      const change = flat[i + 1];
      if (typeof change === "string") prev = Array.from(change);
      else {
        const [front, back, middle] = change;
        prev = prev.slice(0, front).concat(Array.from(middle), prev.slice(prev.length - back));
      }
      out.push({ status: flat[i][0], unit: flat[i].slice(1), output: prev.join("") });
    }
    return out;
  }

  const VLQ_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

  // vlqNumbers reads base64 VLQ, as in a source map: digits of 5 bits,
  // least significant first, 32 added to all but a number's last, the sign
  // in the first one's lowest bit. Arithmetic, not bitwise: a start since
  // the epoch has more than 32 bits.
  function vlqNumbers(s) {
    const out = [];
    let v = 0;
    let scale = 1;
    for (const c of s) {
      const d = VLQ_DIGITS.indexOf(c);
      v += (d & 31) * scale;
      if (d & 32) {
        scale *= 32;
        continue;
      }
      out.push(v % 2 ? -(v - 1) / 2 : v / 2);
      v = 0;
      scale = 1;
    }
    return out;
  }

  // refresh reads the status again, one request at a time.
  async function refresh() {
    if (state.refreshing) {
      state.again = true;
      return;
    }
    state.refreshing = true;
    try {
      const st = await fetchStatus();
      if (st.started === state.started) render(st);
      else if (state.source) {
        // Another vitals answers (restarted since the stream opened): begin
        // again with it, from its first event.
        state.source.close();
        state.source = null;
        connect();
      }
    } catch (err) {
      // The stream says when the connection is lost.
    } finally {
      state.refreshing = false;
      if (state.again) {
        state.again = false;
        refresh();
      }
    }
  }

  function refreshSoon() {
    if (state.soon) return;
    state.soon = setTimeout(() => {
      state.soon = null;
      refresh();
    }, 50);
  }

  setInterval(() => {
    if (state.source && !document.hidden) refresh();
  }, REFRESH_MS);

  // ---- the events ----

  function onEvent(e) {
    addEvent(e);
    if (e.type === "stopping") {
      state.stopping = e.output || "";
      showBanner(state.stopping);
    }
    if (e.id <= state.shownId) return; // the status shown has it already
    if (e.type === "check-passed" || e.type === "check-warned" || e.type === "check-failed") {
      const row = state.rows.get(e.check);
      if (row) {
        row.eventId = e.id;
        setStatus(row, e.to);
      }
    }
    refreshSoon();
  }

  function clearEvents() {
    $("events").replaceChildren();
    $("no-events").hidden = false;
  }

  const GOOD = new Set(["check-passed", "level-passed", "service-started", "check-started"]);
  const BAD = new Set(["check-failed", "level-failed", "service-exited", "stopping", "check-stopped", "check-removed"]);

  function eventText(e) {
    const out = e.output ? ": " + e.output : "";
    switch (e.type) {
      case "check-passed":
      case "check-warned":
      case "check-failed":
        return e.check + " (" + e.level + "): " + e.from + " → " + e.to + out;
      case "level-passed":
        return e.level + " passes" + out;
      case "level-failed":
        return e.level + " fails" + out;
      case "service-started":
        return e.service + " started, pid " + e.pid + (e.restarts ? " (restart " + e.restarts + ")" : "");
      case "service-exited": {
        const how = e.signal ? "was killed by " + e.signal : "exited with code " + e.exitCode;
        return e.service + " (pid " + e.pid + ") " + how + (e.reason ? " (" + e.reason + ")" : "");
      }
      case "stopping":
        return "vitals is stopping" + out;
      case "checks-reset":
        return "every check started over" + out;
      case "notice": {
        const data = Object.entries(e.data || {}).map(([k, v]) => k + "=" + v).join(" ");
        return e.key + (data ? " " + data : "");
      }
      default:
        return (e.check || "") + out;
    }
  }

  function addEvent(e) {
    const list = $("events");
    const li = el("li");
    li.dataset.id = e.id;
    li.dataset.type = e.type;
    const type = el("span", "event-type", e.type);
    if (GOOD.has(e.type)) type.classList.add("good");
    else if (BAD.has(e.type)) type.classList.add("bad");
    else if (e.type === "check-warned") type.classList.add("warn");
    li.append(timeEl(e.time, clock(e.time)), type, el("span", "event-text", eventText(e)));
    list.prepend(li);
    while (list.children.length > EVENTS_SHOWN) list.lastElementChild.remove();
    $("no-events").hidden = true;
  }

  // ---- the status ----

  function render(st) {
    state.shownId = st.lastEventId;
    state.details = st.details;
    $("service").textContent = [st.serviceId, st.version].filter(Boolean).join(" ");
    document.title = "vitals" + (st.serviceId ? " · " + st.serviceId : "");
    $("withheld").hidden = st.details;
    renderLevels(st.levels);
    if (st.draining || state.stopping !== null) showBanner(state.stopping || "");
    else $("banner").hidden = true;
    renderChecks(st);
    renderSummary(st);
    renderServices(st);
  }

  // renderSummary says in one line how many checks pass, and which do not,
  // with why when the agent shows outputs: "3 of 4 checks pass; 1 failing:
  // db (connection refused)".
  function renderSummary(st) {
    const s = summary(st.checks, st.details);
    const p = $("summary");
    p.dataset.state = s.state;
    p.textContent = s.text;
  }

  const SUMMARY_REASON_MAX = 80; // characters of a reason in the summary; the row has it whole

  function summary(checks, details) {
    const running = checks.filter((c) => !c.stopped);
    const by = (status) => running.filter((c) => c.status === status);
    const passing = running.length - by("fail").length - by("pending").length;
    if (checks.length === 0) return { state: "pending", text: "This agent has no checks." };
    const n = running.length;
    const parts = [passing + " of " + n + " check" + (n === 1 ? " passes" : "s pass")];
    if (n === 0) parts[0] = "No check runs";
    const named = (cs, why) =>
      cs
        .map((c) => {
          const out = why && details && c.last && c.last.output;
          if (!out) return c.name;
          return c.name + " (" + (out.length > SUMMARY_REASON_MAX ? out.slice(0, SUMMARY_REASON_MAX - 1) + "…" : out) + ")";
        })
        .join(", ");
    for (const [status, word, why] of [["fail", "failing", true], ["warn", "warning", true], ["pending", "pending", false]]) {
      const cs = by(status);
      if (cs.length) parts.push(cs.length + " " + word + ": " + named(cs, why));
    }
    const stopped = checks.filter((c) => c.stopped);
    if (stopped.length) parts.push(stopped.length + " stopped: " + named(stopped, false));
    const state = by("fail").length ? "fail" : by("warn").length ? "warn" : by("pending").length || n === 0 ? "pending" : "pass";
    return { state, text: parts.join("; ") };
  }

  function showBanner(why) {
    const b = $("banner");
    b.textContent = "Stopping: readiness fails from now on, and vitals stops the workload once its drain ends." +
      (why ? " Why: " + why + "." : "");
    b.hidden = false;
  }

  const LEVEL_PATHS = { startup: "/startupz", live: "/livez", ready: "/readyz" };

  function renderLevels(levels) {
    const ul = $("levels");
    ul.replaceChildren(
      ...levels.map((l) => {
        const li = el("li", "level " + (l.ok ? "pass" : "fail"));
        li.dataset.level = l.level;
        li.append(el("span", "level-name", l.level), badge(l.ok ? "pass" : "fail"), " ", el("span", "level-path", LEVEL_PATHS[l.level] || ""));
        if (l.reason) li.append(el("p", "level-reason", l.reason));
        return li;
      })
    );
  }

  function renderChecks(st) {
    const body = $("check-rows");
    const seen = new Set();
    st.checks.forEach((c, i) => {
      seen.add(c.name);
      let row = state.rows.get(c.name);
      if (!row) {
        row = newRow(c);
        state.rows.set(c.name, row);
      }
      if (body.children[i] !== row.tr) body.insertBefore(row.tr, body.children[i] || null);
      updateRow(row, c, st);
    });
    for (const [name, row] of state.rows) {
      if (!seen.has(name)) {
        row.tr.remove();
        state.rows.delete(name);
      }
    }
    $("no-checks").hidden = st.checks.length > 0;
  }

  const COLUMNS = ["name", "level", "kind", "status", "since", "output", "duration", "history", "uptime", "latency"];
  const LABELS = ["Check", "Level", "Kind", "Status", "Since", "Last output", "Last duration", "History", "Uptime", "Latency"];

  function newRow(c) {
    const tr = el("tr");
    tr.dataset.check = c.name;
    const cells = {};
    COLUMNS.forEach((col, i) => {
      const td = el(col === "name" ? "th" : "td", "col-" + col);
      if (col === "name") td.scope = "row";
      td.dataset.label = LABELS[i];
      tr.append(td);
      cells[col] = td;
    });
    cells.name.textContent = c.name;
    cells.duration.classList.add("num");
    cells.uptime.classList.add("num");
    const history = el("ol", "history");
    history.setAttribute("aria-label", "Kept results of " + c.name + ", oldest first, placed by their time");
    // The time axis under the strip: the oldest kept result's time, the
    // window's span, now.
    const axis = el("div", "axis");
    const axisStart = el("time", "axis-start");
    const axisSpan = el("span", "axis-span");
    axis.append(axisStart, axisSpan, el("span", "axis-end", "now"));
    axis.setAttribute("aria-hidden", "true"); // each mark says its own time
    const detail = el("p", "mark-detail", "");
    detail.id = "detail-" + c.name;
    // Not a live region: it changes with every refresh of every check. A
    // mark says its result itself, by its label, when it has the focus.
    const reasons = el("ul", "reasons");
    reasons.setAttribute("aria-label", "Why the kept results of " + c.name + " failed, each reason once");
    cells.history.append(history, axis, detail, reasons);
    const row = { tr, cells, history, axis, axisStart, axisSpan, detail, reasons, marks: [], status: null, eventId: 0 };
    // A mark's result shows under the strip while it has the focus or the pointer.
    const show = (ev) => {
      const b = ev.target.closest(".mark");
      if (!b) return;
      detail.textContent = b.dataset.text;
      detail.dataset.outcome = b.dataset.outcome;
    };
    history.addEventListener("focusin", show);
    history.addEventListener("mouseover", show);
    return row;
  }

  // setStatus shows a check's status, and stamps the row with when it
  // changed (data-changed-at, in ms since the epoch).
  function setStatus(row, status) {
    if (row.status === status) return;
    row.status = status;
    row.tr.dataset.status = status;
    row.tr.dataset.changedAt = String(Date.now());
    row.cells.status.replaceChildren(badge(status));
  }

  function updateRow(row, c, st) {
    row.period = c.period;
    row.cells.level.textContent = c.level;
    row.cells.kind.textContent = c.kind;
    // A status older than the event that changed the check says nothing new.
    if (!(row.eventId > st.lastEventId)) setStatus(row, c.stopped ? "stopped" : c.status);
    const now = new Date(st.time).getTime();
    if (c.since) {
      row.cells.since.replaceChildren(timeEl(c.since, ago(now - new Date(c.since).getTime()) + " ago"));
    } else {
      row.cells.since.replaceChildren(el("span", "muted", "—"));
    }
    const last = c.last;
    if (!last) {
      row.cells.output.replaceChildren(el("span", "muted", c.kind === "heartbeat" ? "waiting for the first beat" : "no result yet"));
      row.cells.duration.textContent = "—";
    } else {
      if (last.output) row.cells.output.textContent = last.output;
      else row.cells.output.replaceChildren(el("span", "muted", st.details ? "—" : "withheld"));
      row.cells.duration.textContent = formatMs(duration(last.duration));
    }
    const history = c.history || [];
    const win = keptWindow(history, now);
    updateHistory(row, history, win);
    updateReasons(row, history);
    updateUptime(row, history, win);
    updateSpark(row, c, win);
  }

  // keptWindow is the span a check's history covers on its time axis:
  // from its oldest kept result's start to now, in ms since the epoch.
  function keptWindow(history, now) {
    if (history.length === 0) return { start: now, end: now, span: 0 };
    const start = Date.parse(history[0].time);
    const end = Math.max(now, Date.parse(history[history.length - 1].time) + 1);
    return { start, end, span: end - start };
  }

  // spanText says a window's span the way a person would: "12 min".
  function spanText(ms) {
    const s = Math.round(ms / 1000);
    if (s < 60) return s + " s";
    const m = Math.round(s / 60);
    if (m < 60) return m + " min";
    const h = Math.floor(m / 60);
    if (h < 48) return h + " h" + (m % 60 ? " " + (m % 60) + " min" : "");
    return Math.round(h / 24) + " days";
  }

  // at is where a time falls on a window's axis, in percent.
  function at(win, t) {
    return win.span > 0 ? Math.min(100, Math.max(0, (100 * (t - win.start)) / win.span)) : 0;
  }

  // updateHistory keeps the marks already there (so that a mark with the
  // focus keeps it), drops those of results no longer kept, adds the new,
  // and places each at its time on the window's axis, as wide as a period
  // (or a share of the strip, when few results span a long time).
  function updateHistory(row, history, win) {
    const keys = history.map((r) => r.time);
    const wanted = new Set(keys);
    row.marks = row.marks.filter((m) => {
      if (wanted.has(m.dataset.key)) return true;
      m.parentElement.remove();
      return false;
    });
    const kept = row.marks.map((m) => m.dataset.key);
    if (kept.some((k, i) => k !== keys[i])) {
      // Not the start of the new history (the checks started over): all anew.
      row.history.replaceChildren();
      row.marks = [];
    }
    for (let i = row.marks.length; i < history.length; i++) {
      const r = history[i];
      const b = el("button", "mark " + outcome(r));
      b.type = "button";
      b.dataset.key = r.time;
      b.dataset.outcome = outcome(r);
      b.dataset.text = resultText(r);
      b.setAttribute("aria-label", b.dataset.text);
      const li = el("li");
      li.append(b);
      row.history.append(li);
      row.marks.push(b);
    }
    const period = duration(row.period);
    const width = Math.min(100 / Math.max(history.length, MARKS_MIN), win.span > 0 ? (100 * period) / win.span : 100);
    row.marks.forEach((m, i) => {
      // CSSOM, which the policy allows, not a style attribute, which it refuses.
      const li = m.parentElement;
      li.style.left = Math.min(at(win, Date.parse(history[i].time)), 100 - width) + "%";
      li.style.width = width + "%";
    });
    row.axis.hidden = history.length === 0;
    if (history.length > 0) {
      row.axisStart.dateTime = history[0].time;
      row.axisStart.textContent = clock(history[0].time).slice(0, 8);
      row.axisSpan.textContent = "last " + spanText(win.span);
    }
    if (history.length === 0) row.detail.textContent = "";
    else if (!row.history.contains(document.activeElement) && !row.history.matches(":hover")) {
      const lastMark = row.marks[row.marks.length - 1];
      row.detail.textContent = "Latest: " + lastMark.dataset.text;
      row.detail.dataset.outcome = lastMark.dataset.outcome;
    }
  }

  // updateReasons lists each distinct reason the kept results failed for
  // once, with how many failed so and when last, newest first: the marks
  // say when, this says why, without a reason repeated per mark.
  function updateReasons(row, history) {
    const items = failureReasons(history).map((f) => {
      const li = el("li");
      li.dataset.count = String(f.count);
      li.append(el("span", "reason-text", f.output || (state.details ? "no output" : "output withheld")),
        el("span", "reason-count", " ×" + f.count + ", last "), timeEl(f.last, clock(f.last).slice(0, 8)));
      return li;
    });
    row.reasons.replaceChildren(...items);
    row.reasons.hidden = items.length === 0;
  }

  // failureReasons are the distinct outputs of the failed results, each
  // with its count and its last time, the latest first.
  function failureReasons(history) {
    const by = new Map();
    for (const r of history) {
      if (r.ok || r.undecided) continue;
      const f = by.get(r.output || "") || { output: r.output || "", count: 0, last: r.time };
      f.count++;
      f.last = r.time;
      by.set(f.output, f);
    }
    return Array.from(by.values()).sort((a, b) => Date.parse(b.last) - Date.parse(a.last));
  }

  const HOUR_MS = 3600e3;

  // uptime is the share of the results since a time that passed (a warning
  // passes), of those that decided: a run that decided nothing yet is
  // neither up nor down.
  function uptime(history, since) {
    const decided = history.filter((r) => !r.undecided && Date.parse(r.time) >= since);
    const ok = decided.filter((r) => r.ok).length;
    return { ok, decided: decided.length };
  }

  function pctText(u) {
    if (u.decided === 0) return "—";
    const pct = (100 * u.ok) / u.decided;
    return (pct === 100 ? "100" : Math.min(pct, 99.9).toFixed(1)) + "%";
  }

  // updateUptime shows the uptime over the last hour and over the kept
  // window, each with the span it covers.
  function updateUptime(row, history, win) {
    const cell = row.cells.uptime;
    if (history.length === 0) {
      cell.replaceChildren(el("span", "muted", "—"));
      return;
    }
    const hourStart = Math.max(win.end - HOUR_MS, win.start);
    const spans = [
      ["hour", "1 h", uptime(history, win.end - HOUR_MS), "the last hour" + (hourStart > win.end - HOUR_MS ? " (kept: the last " + spanText(win.span) + ")" : "")],
      ["kept", spanText(win.span), uptime(history, win.start), "the kept window, the last " + spanText(win.span)],
    ];
    const dl = el("dl", "uptime");
    for (const [name, label, u, what] of spans) {
      const dd = el("dd", null, pctText(u));
      dd.dataset.window = name;
      dd.title = u.decided ? u.ok + " of the " + u.decided + " results that decided in " + what + " passed" : "no result decided in " + what;
      dl.append(el("dt", null, label), dd);
    }
    cell.replaceChildren(dl);
  }

  const SVG = "http://www.w3.org/2000/svg";

  // updateSpark draws the kept results' durations over the same time axis
  // as the history, between the shortest and the longest, which label it.
  function updateSpark(row, c, win) {
    const history = c.history || [];
    const ms = history.map((r) => duration(r.duration));
    const cell = row.cells.latency;
    if (ms.length === 0 || c.kind === "heartbeat" || c.kind === "watchdog") {
      cell.replaceChildren(el("span", "muted", "—"));
      return;
    }
    const maxMs = Math.max(...ms);
    const minMs = Math.min(...ms);
    const range = maxMs - minMs || 1;
    const w = 100;
    const h = 24;
    const points = ms
      .map((v, i) => at(win, Date.parse(history[i].time)).toFixed(1) + "," + (h - 1 - ((v - minMs) / range) * (h - 2)).toFixed(1))
      .join(" ");
    const svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("class", "spark");
    svg.setAttribute("viewBox", "0 0 " + w + " " + h);
    svg.setAttribute("preserveAspectRatio", "none");
    svg.setAttribute("role", "img");
    const label = "Durations of the kept results of " + c.name + ": latest " + formatMs(ms[ms.length - 1]) +
      ", shortest " + formatMs(minMs) + ", longest " + formatMs(maxMs);
    svg.setAttribute("aria-label", label);
    const line = document.createElementNS(SVG, "polyline");
    line.setAttribute("points", ms.length > 1 ? points : "0," + (h / 2) + " " + w + "," + (h / 2));
    svg.append(line);
    const scale = el("div", "latency");
    const top = el("span", "scale-max", formatMs(maxMs));
    const bottom = el("span", "scale-min", formatMs(minMs));
    top.setAttribute("aria-hidden", "true"); // the line's label says them
    bottom.setAttribute("aria-hidden", "true");
    scale.append(top, svg, bottom);
    cell.replaceChildren(scale);
  }

  // The services, in their start order, each with the facts of its run;
  // the heading is "Workload" for one, as it always was, "Services" for
  // several.
  function renderServices(st) {
    const panel = $("services-panel");
    const services = st.services || [];
    if (services.length === 0) {
      panel.hidden = true;
      return;
    }
    panel.hidden = false;
    $("services-heading").textContent = services.length === 1 ? "Workload" : "Services";
    const list = $("services");
    list.classList.toggle("several", services.length > 1);
    const now = new Date(st.time).getTime();
    list.replaceChildren(...services.map((w) => serviceEntry(w, now)));
  }

  function serviceEntry(w, now) {
    const items = [["Name", w.name], ["PID", w.pid ? String(w.pid) : "not running"]];
    items.push(["Started", w.started ? clock(w.started) + " (" + ago(now - new Date(w.started).getTime()) + " ago)" : "—"]);
    items.push(["Restarts", String(w.restarts)]);
    let exit = "none yet";
    const e = w.lastExit;
    if (e) {
      exit = (e.signal ? "killed by " + e.signal : "exit code " + e.exitCode) + (e.reason ? " (" + e.reason + ")" : "") +
        ", pid " + e.pid + ", at " + clock(e.time);
    }
    items.push(["Last exit", exit]);
    const li = el("li", "service");
    li.dataset.service = w.name;
    const dl = el("dl", "workload");
    for (const [k, v] of items) {
      const dd = el("dd", null, v);
      dd.dataset.field = k.toLowerCase().replace(" ", "-");
      dl.append(el("dt", null, k), dd);
    }
    li.append(dl);
    return li;
  }

  connect();
})();
