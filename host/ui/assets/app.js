// cairn dashboard: plain JavaScript, no build step. Every page address
// answers the same static shell; this script logs in (exchanging the
// one-time token for a session secret kept in this origin's sessionStorage),
// fetches the page's server-rendered content with the secret in the
// Authorization header, loads board columns page by page, keeps every page
// live from the server's event stream, and posts actions. No cookie is ever
// sent: a server on another loopback port receives the browser's cookies,
// never this origin's storage (docs/security.md).
"use strict";
(function () {
  const KEY = "cairn.session", HOME = "cairn.home";
  let session = sessionStorage.getItem(KEY);
  // A tab opened from the dashboard starts with an empty sessionStorage:
  // it asks the dashboard's other tabs, over a channel only this origin
  // can join.
  const chan = "BroadcastChannel" in window ? new BroadcastChannel("cairn-session") : null;
  if (chan) chan.addEventListener("message", (ev) => {
    if (ev.data && ev.data.want && session) chan.postMessage({ session: session, home: sessionStorage.getItem(HOME) });
  });

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function notice(msg) {
    const main = document.getElementById("main");
    main.replaceChildren(el("div", { class: "error", role: "alert" }, msg));
  }

  class LoggedOut extends Error {}
  function loggedOut() {
    session = null;
    sessionStorage.removeItem(KEY);
    notice("Not logged in, or the login expired. Run `cairn ui` and open the URL it prints.");
    return new LoggedOut("not logged in");
  }

  // api is every request the page makes for data or an action: the session
  // in the Authorization header, never a cookie.
  async function api(url, opts) {
    opts = opts || {};
    if (!session) throw loggedOut();
    const headers = Object.assign({}, opts.headers, { Authorization: "Bearer " + session });
    const r = await fetch(url, Object.assign({}, opts, { headers: headers, credentials: "omit", cache: "no-store" }));
    if (r.status === 401) throw loggedOut();
    return r;
  }

  async function getJSON(url) {
    const r = await api(url);
    const body = await r.json();
    if (!r.ok) throw new Error((body.error && body.error.message) || r.statusText);
    return body;
  }

  async function act(taskID, payload) {
    const r = await api("/api/task/" + encodeURIComponent(taskID) + "/action", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(payload),
    });
    const body = await r.json();
    if (!r.ok) throw new Error((body.error && body.error.message) || r.statusText);
    return body;
  }

  function askOtherTabs() {
    if (!chan) return Promise.resolve(null);
    return new Promise((resolve) => {
      const on = (ev) => { if (ev.data && ev.data.session) done(ev.data); };
      const done = (v) => { clearTimeout(timer); chan.removeEventListener("message", on); resolve(v); };
      const timer = setTimeout(() => done(null), 400);
      chan.addEventListener("message", on);
      chan.postMessage({ want: true });
    });
  }

  // obtainSession logs in on /login (the token leaves the address bar at
  // once) or takes the session this tab or another one already holds.
  async function obtainSession() {
    if (location.pathname === "/login") {
      const token = new URLSearchParams(location.search).get("token") || "";
      if (!token && session) { history.replaceState(null, "", sessionStorage.getItem(HOME) || "/board"); return; }
      history.replaceState(null, "", "/login");
      const r = await fetch("/api/login", {
        method: "POST", credentials: "omit", cache: "no-store",
        headers: { "Content-Type": "application/json" }, body: JSON.stringify({ token: token }),
      });
      const body = await r.json().catch(() => ({}));
      if (!r.ok) throw new Error((body.error && body.error.message) || "login refused: " + r.status);
      session = body.session;
      sessionStorage.setItem(KEY, session);
      sessionStorage.setItem(HOME, body.home);
      history.replaceState(null, "", body.home);
      return;
    }
    if (session) return;
    const got = await askOtherTabs();
    if (!got) throw loggedOut();
    session = got.session;
    sessionStorage.setItem(KEY, session);
    if (got.home) sessionStorage.setItem(HOME, got.home);
  }

  // The page's content: the server-rendered view of the address shown.
  function viewURL() { return "/view" + location.pathname + location.search; }
  async function fetchView() {
    const r = await api(viewURL());
    const text = await r.text();
    if (!r.ok && !(r.headers.get("Content-Type") || "").startsWith("text/html")) throw new Error(text || r.statusText);
    return new DOMParser().parseFromString(text, "text/html");
  }

  async function boot() {
    try {
      await obtainSession();
      if (location.pathname === "/") history.replaceState(null, "", sessionStorage.getItem(HOME) || "/board");
      const doc = await fetchView();
      document.title = doc.title;
      delete document.body.dataset.shell;
      for (const k in doc.body.dataset) document.body.dataset[k] = doc.body.dataset[k];
      document.body.replaceChildren(...Array.from(doc.body.childNodes).map((n) => document.adoptNode(n)));
    } catch (e) {
      if (!(e instanceof LoggedOut)) notice(e.message);
      return;
    }
    init();
  }

  function init() {
    const actionsOn = document.body.dataset.actions === "true";
    const live = document.getElementById("live");

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
      c.count.textContent = res.total_capped ? "more than " + res.total_count : String(res.total_count);
      c.more.hidden = res.tasks.length < res.limit || (!res.total_capped && c.loaded >= c.total);
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

    // ---- create and edit forms (docs/decisions.md D45) ----
    // A refusal shows beside the field it names (the tools' errors carry
    // details.field; "labels[2]" is the labels field), else below the form.
    function fieldOf(err) {
      const f = err && err.details && err.details.field;
      return typeof f === "string" ? f.replace(/^\//, "").split(/[.\[\/]/)[0] : "";
    }
    function clearErrors(form) {
      for (const s of form.querySelectorAll(".field-error")) s.textContent = "";
      for (const i of form.querySelectorAll("[aria-invalid]")) i.removeAttribute("aria-invalid");
    }
    document.addEventListener("submit", async (ev) => {
      const form = ev.target.closest("form[data-form]");
      if (!form) return;
      ev.preventDefault();
      clearErrors(form);
      const out = form.querySelector(".result");
      out.textContent = "saving…";
      const payload = {};
      for (const [k, v] of new FormData(form)) payload[k] = v;
      const edit = form.dataset.form === "edit";
      const url = edit ? "/api/task/" + encodeURIComponent(form.closest("[data-task]").dataset.task) + "/edit" : "/api/tasks";
      let r, body;
      try {
        r = await api(url, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(payload) });
        body = await r.json();
      } catch (e) {
        if (!(e instanceof LoggedOut)) out.textContent = e.message;
        return;
      }
      if (!r.ok) {
        const err = body.error || { message: r.statusText };
        const field = fieldOf(err);
        const slot = field && form.querySelector('[data-error-for="' + CSS.escape(field) + '"]');
        if (slot) {
          slot.textContent = err.message;
          const input = form.querySelector('[name="' + CSS.escape(field) + '"]');
          if (input) { input.setAttribute("aria-invalid", "true"); input.focus(); }
          out.textContent = "Not saved: see " + field.replace(/_/g, " ") + ".";
        } else {
          out.textContent = err.message;
        }
        form.dataset.refused = field || "form";
        return;
      }
      delete form.dataset.refused;
      if (!edit) { location.href = "/task/" + encodeURIComponent(body.task_id); return; }
      out.textContent = body.unchanged ? "Nothing changed." : "Saved.";
      form.dataset.saved = String(Date.now());
      if (document.activeElement) document.activeElement.blur();
      schedule();
    });

    // ---- approvals (docs/decisions.md D45) ----
    // The navigation's badge: how many approvals wait, asked after the
    // page renders and again on each live refresh.
    async function pendingBadge() {
      const b = document.querySelector("[data-pending]");
      if (!b) return;
      try {
        const n = (await getJSON("/api/approvals/count")).pending;
        b.textContent = String(n);
        b.setAttribute("aria-label", n + " waiting");
        b.hidden = !n;
      } catch (e) { b.hidden = true; }
    }
    pendingBadge();
    // onDecision posts a person's decision from a row's Approve or Reject
    // form (its data-<attr> holds the decision) and shows the outcome in the
    // row; a refusal naming the reason shows beside that field.
    function onDecision(formSel, attr, rowSel, urlOf, outcome) {
      document.addEventListener("submit", async (ev) => {
        const form = ev.target.closest(formSel);
        if (!form) return;
        ev.preventDefault();
        const row = form.closest(rowSel);
        clearErrors(row);
        const out = row.querySelector(".result");
        out.textContent = "sending…";
        const payload = { decision: form.dataset[attr], reason: (new FormData(form)).get("reason") || "" };
        let r, body;
        try {
          r = await api(urlOf(row), { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(payload) });
          body = await r.json();
        } catch (e) {
          if (!(e instanceof LoggedOut)) out.textContent = e.message;
          return;
        }
        if (!r.ok) {
          const err = body.error || { message: r.statusText };
          const slot = fieldOf(err) === "reason" && form.querySelector('[data-error-for="reason"]');
          if (slot) { slot.textContent = err.message; form.querySelector('[name="reason"]').setAttribute("aria-invalid", "true"); out.textContent = ""; }
          else out.textContent = err.message;
          row.dataset.refused = fieldOf(err) || err.code || "refused";
          return;
        }
        out.textContent = (body.state === "approved" ? "Approved" : "Rejected") + " by " + body.by + "; " + outcome(body) + ".";
        row.dataset.decided = body.state;
        if (document.activeElement) document.activeElement.blur();
      });
    }
    onDecision("form[data-approve]", "approve", "[data-task]",
      (row) => "/api/task/" + encodeURIComponent(row.dataset.task) + "/approve",
      (body) => "the task is " + String(body.status).replace(/_/g, " "));
    // sdd phase moves (docs/decisions.md D45): the same decision, posted
    // for the phase the row's move goes to.
    onDecision("form[data-gate]", "gate", "[data-phase]",
      (row) => "/api/sdd/gate/" + encodeURIComponent(row.dataset.phase) + "/approve",
      (body) => "the current phase is " + body.current_phase);

    // ---- bundle verification ----
    const vf = document.getElementById("verify");
    if (vf) {
      vf.addEventListener("submit", async (ev) => {
        ev.preventDefault();
        const out = document.getElementById("verify-result");
        out.textContent = "verifying…";
        const r = await api("/api/audits/verify", { method: "POST", body: new FormData(vf) });
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
      pendingBadge();
      if (board) return loadBoard();
      if (document.activeElement && document.activeElement.closest("form")) return; // do not wipe a form being filled
      const doc = await fetchView();
      const main = doc.getElementById("main"), cur = document.getElementById("main");
      // Unchanged content stays in place: no churn under the pointer (a
      // click must not land between two versions of a link).
      if (main && main.innerHTML !== cur.innerHTML) cur.replaceWith(main);
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
    // The live stream: fetch() with the session header, read as server-sent
    // events (an EventSource cannot send a header). When it ends (a daemon
    // restart, for instance) the page reconnects after the stream's retry
    // interval and refetches what it missed.
    // Leaving the page ends its stream at once: a browser holds six
    // connections per origin, and streams left to the server's next ping
    // would hold the seventh page's requests back.
    let retry = 500, wasDown = false, leaving = false;
    let streamEnd = new AbortController();
    window.addEventListener("pagehide", () => { leaving = true; streamEnd.abort(); });
    // A page the browser kept and shows again (back/forward) reopens it.
    window.addEventListener("pageshow", (ev) => {
      if (!ev.persisted || !leaving) return;
      leaving = false;
      streamEnd = new AbortController();
      wasDown = true;
      connect();
    });
    function onBlock(block) {
      let type = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("retry:")) retry = parseInt(line.slice(6), 10) || retry;
        else if (line.startsWith("event:")) type = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (type === "change" && data.length) { const ev = { data: data.join("\n") }; if (relevant(ev)) schedule(); }
    }
    async function connect() {
      try {
        const r = await api("/events", { headers: { Accept: "text/event-stream" }, signal: streamEnd.signal });
        if (!r.ok) throw new Error("stream: " + r.status);
        live.textContent = "live";
        live.className = "live on";
        // Catch up once the stream is open: after a restart, and on a
        // server-rendered page with whatever changed since its content was
        // fetched (on the system page, this page's own session). The
        // board's columns load while the stream opens.
        if (wasDown || !board) { wasDown = false; schedule(); }
        const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
        let buf = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += value.replace(/\r\n?/g, "\n");
          let i;
          while ((i = buf.indexOf("\n\n")) >= 0) {
            onBlock(buf.slice(0, i));
            buf = buf.slice(i + 2);
          }
        }
      } catch (e) {
        if (e instanceof LoggedOut) { live.textContent = "logged out"; live.className = "live off"; return; }
      }
      if (leaving) return;
      live.textContent = "reconnecting…";
      live.className = "live off";
      wasDown = true;
      setTimeout(connect, retry);
    }
    connect();

    // ---- downloads (proof bundles): fetched with the session, saved from a blob ----
    document.addEventListener("click", async (ev) => {
      const a = ev.target.closest("a[data-download]");
      if (!a) return;
      ev.preventDefault();
      try {
        const r = await api(a.getAttribute("href"));
        if (!r.ok) {
          const body = await r.json().catch(() => ({}));
          throw new Error((body.error && body.error.message) || r.statusText);
        }
        const url = URL.createObjectURL(await r.blob());
        const save = el("a", { href: url, download: a.dataset.download });
        document.body.appendChild(save);
        save.click();
        save.remove();
        setTimeout(() => URL.revokeObjectURL(url), 60000);
      } catch (e) {
        if (!(e instanceof LoggedOut)) window.alert(e.message);
      }
    });
  }

  boot();
})();
