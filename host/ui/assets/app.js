// cairn dashboard: plain JavaScript, no build step. Pages are rendered by
// the server; this script loads board columns page by page, keeps every page
// live from the server-sent event stream, and posts actions.
"use strict";
(function () {
  const actionsOn = document.body.dataset.actions === "true";
  const live = document.getElementById("live");

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  async function getJSON(url) {
    const r = await fetch(url, { credentials: "same-origin" });
    const body = await r.json();
    if (!r.ok) throw new Error((body.error && body.error.message) || r.statusText);
    return body;
  }

  async function act(taskID, payload) {
    const r = await fetch("/api/task/" + encodeURIComponent(taskID) + "/action", {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json" }, body: JSON.stringify(payload),
    });
    const body = await r.json();
    if (!r.ok) throw new Error((body.error && body.error.message) || r.statusText);
    return body;
  }

  // ---- board ----
  const board = document.getElementById("board");
  const columns = {};
  function filterParams() {
    const p = new URLSearchParams();
    const f = document.getElementById("filters");
    for (const [k, v] of new FormData(f)) if (v) p.set(k, v);
    return p;
  }
  function card(t) {
    const li = el("li", { class: "card prio-" + t.priority, "data-task": t.task_id });
    const a = el("a", { href: "/task/" + t.task_id }, t.task_id + " " + t.title);
    li.appendChild(a);
    const meta = el("div", { class: "meta" });
    meta.appendChild(el("span", { class: "badge prio", title: "priority" }, t.priority));
    if (t.assignee && t.assignee !== "unassigned") meta.appendChild(el("span", { class: "assignee", title: "assignee" }, "@" + t.assignee));
    for (const l of t.labels || []) meta.appendChild(el("span", { class: "label" }, l));
    if (t.subtask_count) meta.appendChild(el("span", { class: "subtasks", title: "sub-tasks" }, "▸ " + t.subtask_count + " sub-task" + (t.subtask_count === 1 ? "" : "s")));
    if (t.depends_on_count) meta.appendChild(el("span", { class: "deps", title: "tasks this one waits on" }, "← waits on " + t.depends_on_count));
    if (t.depended_on_by_count) meta.appendChild(el("span", { class: "deps", title: "tasks waiting on this one" }, "→ " + t.depended_on_by_count + " wait on it"));
    li.appendChild(meta);
    if (t.blocked_reason) li.appendChild(el("p", { class: "reason" }, "blocked: " + t.blocked_reason));
    const pct = Math.round(t.progress || 0);
    const prog = el("div", { class: "progress" });
    prog.appendChild(el("progress", { max: "100", value: String(pct), "aria-label": "progress " + pct + "%" }));
    prog.appendChild(el("span", { class: "pct" }, pct + "%"));
    li.appendChild(prog);
    if (actionsOn && t.moves && t.moves.length) {
      const form = el("form", { class: "move" });
      const sel = el("select", { name: "status", "aria-label": "Move " + t.task_id + " to" });
      for (const m of t.moves) sel.appendChild(el("option", { value: m }, m));
      form.appendChild(sel);
      form.appendChild(el("button", { type: "submit" }, "Move"));
      form.addEventListener("submit", async (ev) => {
        ev.preventDefault();
        const to = sel.value;
        let payload = { action: "move", status: to };
        if (to === "blocked") {
          const reason = window.prompt("Why is " + t.task_id + " blocked?");
          if (!reason) return;
          payload = { action: "block", reason: reason };
        }
        try { await act(t.task_id, payload); } catch (e) { window.alert(e.message); }
      });
      li.appendChild(form);
    }
    return li;
  }
  async function loadColumn(status, append) {
    const c = columns[status];
    const p = filterParams();
    p.set("status", status);
    p.set("offset", append ? String(c.loaded) : "0");
    p.set("limit", board.dataset.pageSize);
    const seq = ++c.seq;
    const res = await getJSON("/api/tasks?" + p.toString());
    if (seq !== c.seq) return; // a newer load superseded this one
    if (!append) { c.list.replaceChildren(); c.loaded = 0; }
    const frag = document.createDocumentFragment();
    for (const t of res.tasks) frag.appendChild(card(t));
    c.list.appendChild(frag);
    c.list.appendChild(c.sentinel); // keep the scroll trigger after the last card
    c.loaded += res.tasks.length;
    c.total = res.total_count;
    c.count.textContent = String(res.total_count);
    c.more.hidden = c.loaded >= c.total;
  }
  // loadBoard reloads every column's first page and returns how long the
  // board took to render, in milliseconds.
  async function loadBoard() {
    const start = performance.now();
    await Promise.all(Object.keys(columns).map((s) => loadColumn(s, false)));
    return Math.round(performance.now() - start);
  }
  if (board) {
    for (const sec of board.querySelectorAll(".column")) {
      const st = sec.dataset.status;
      const c = columns[st] = { list: sec.querySelector("[data-cards]"), count: sec.querySelector("[data-count]"), more: sec.querySelector("[data-more]"), loaded: 0, total: 0, seq: 0 };
      c.sentinel = el("li", { class: "sentinel", "aria-hidden": "true" });
      c.more.addEventListener("click", () => loadColumn(st, true));
      // Load the next page when a column is scrolled to its end: a
      // sentinel after the last card enters the column's viewport.
      const io = new IntersectionObserver((entries) => {
        for (const e of entries) if (e.isIntersecting && c.loaded > 0 && !c.more.hidden) loadColumn(st, true);
      }, { root: c.list });
      io.observe(c.sentinel);
    }
    document.getElementById("filters").addEventListener("submit", (ev) => {
      ev.preventDefault();
      history.replaceState(null, "", "/board?" + filterParams().toString());
      delete board.dataset.filterMs;
      loadBoard().then((ms) => { board.dataset.filterMs = String(ms); });
    });
    // The first render, timed from navigation start, for people and tests.
    loadBoard().then(() => { board.dataset.firstRenderMs = String(Math.round(performance.now())); });
  }

  // ---- task page actions (delegated: live refreshes replace the forms) ----
  document.addEventListener("submit", async (ev) => {
    const form = ev.target.closest("form[data-action]");
    if (!form) return;
    ev.preventDefault();
    const task = form.closest("[data-task]").dataset.task;
    const payload = { action: form.dataset.action };
    for (const [k, v] of new FormData(form)) payload[k] = v;
    const out = document.querySelector(".actions .result");
    try { await act(task, payload); out.textContent = "Done."; form.reset(); } catch (e) { out.textContent = e.message; }
  });

  // ---- bundle verification ----
  const vf = document.getElementById("verify");
  if (vf) {
    vf.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const out = document.getElementById("verify-result");
      out.textContent = "verifying…";
      const r = await fetch("/audits/verify", { method: "POST", body: new FormData(vf), credentials: "same-origin" });
      const body = await r.json();
      out.replaceChildren();
      if (body.error) { out.textContent = body.error.message; return; }
      out.className = body.ok ? "ok" : "error";
      out.appendChild(el("p", {}, body.ok
        ? "OK: proves audit session " + body.session_id + ": " + body.records + " records, root " + body.root + ", signed by " + body.signer
        : "Does not verify" + (body.session_id ? " (session " + body.session_id + ")" : "") + ":"));
      const ul = el("ul");
      for (const p of body.problems || []) ul.appendChild(el("li", {}, p));
      out.appendChild(ul);
    });
  }

  // ---- lease countdowns (the page may stay open for the whole lease) ----
  function countdown() {
    for (const td of document.querySelectorAll("[data-expires]")) {
      const left = Math.round((Date.parse(td.dataset.expires) - Date.now()) / 1000);
      if (isNaN(left)) continue;
      if (left <= 0) { td.textContent = "expired"; continue; }
      const h = Math.floor(left / 3600), m = Math.floor((left % 3600) / 60), sec = left % 60;
      td.textContent = (h ? h + "h" : "") + (h || m ? m + "m" : "") + sec + "s";
    }
  }
  if (document.querySelector("[data-expires]") || document.body.dataset.page === "sdd") setInterval(countdown, 1000);

  // ---- live ----
  // Server-rendered pages swap their main content; the board reloads its
  // columns. Both are debounced so a burst of events costs one refetch.
  // One refresh at a time: events arriving meanwhile (an agent creating
  // hundreds of tasks) coalesce into one more refresh when it ends.
  let timer = null, running = false, again = false;
  async function refresh() {
    if (running) { again = true; return; }
    running = true;
    try { await refreshNow(); } finally {
      running = false;
      if (again) { again = false; schedule(); }
    }
  }
  async function refreshNow() {
    if (board) return loadBoard();
    if (document.activeElement && document.activeElement.closest("form")) return; // do not wipe a form being filled
    const r = await fetch(location.href, { credentials: "same-origin" });
    if (!r.ok) return;
    const doc = new DOMParser().parseFromString(await r.text(), "text/html");
    const main = doc.getElementById("main");
    if (main) document.getElementById("main").replaceWith(main);
  }
  // A board filtered to one project ignores other projects' task events.
  function relevant(ev) {
    if (!board) return true;
    let msg;
    try { msg = JSON.parse(ev.data); } catch (e) { return true; }
    const want = new FormData(document.getElementById("filters")).get("project");
    const got = msg.data && msg.data.project;
    return !want || !got || want === got;
  }
  function schedule() {
    clearTimeout(timer);
    timer = setTimeout(refresh, 150);
  }
  let es = null, wasDown = false;
  function connect() {
    es = new EventSource("/events");
    es.onopen = () => {
      live.textContent = "live";
      live.className = "live on";
      if (wasDown) { wasDown = false; schedule(); } // caught up after a restart
    };
    es.addEventListener("change", (ev) => { if (relevant(ev)) schedule(); });
    es.onerror = () => {
      live.textContent = "reconnecting…";
      live.className = "live off";
      wasDown = true;
      if (es.readyState === EventSource.CLOSED) setTimeout(connect, 1000);
    };
  }
  connect();
})();
