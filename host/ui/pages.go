package ui

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html"
	"html/template"
	"io/fs"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

func assetHandler() http.Handler {
	sub, _ := fs.Sub(assetFS, "assets")
	files := http.StripPrefix("/assets/", http.FileServer(http.FS(sub)))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}

var funcs = template.FuncMap{
	"json":      jsonView,
	"short":     func(h string) string { return shortHash(h) },
	"remaining": remaining,
	"join":      strings.Join,
	"has":       func(list []string, v string) bool { return slices.Contains(list, v) },
	"markdown":  renderMarkdown,
	"when":      when,
	"words":     words,
	"strings":   stringList,
	"percent":   func(v any) int { f, _ := v.(float64); return int(f + 0.5) },
}

// pageNames are the page templates, each parsed with the layout.
var pageNames = []string{"board", "task", "audits", "audit", "sdd", "system", "graph", "burnup", "approvals"}

// pages parses the page templates on the first page served, not at package
// init: every process of the cairn binary (relay, daemon, each built-in
// plugin) links this package, and only the daemon serving the UI needs them.
var pages = sync.OnceValues(func() (map[string]*template.Template, error) {
	m := make(map[string]*template.Template, len(pageNames))
	for _, name := range pageNames {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("page template %s: %w", name, err)
		}
		m[name] = t
	}
	return m, nil
})

// pageData is what every page template receives.
type pageData struct {
	Page    string
	Title   string
	Person  string
	Actions bool
	Data    any
	Error   *errs.Error
}

// page renders a page template with the data its loader gathers; a tool's
// error shows on the page rather than as a bare status.
func (s *Server) page(name string, load func(r *http.Request, g Grant) (any, *errs.Error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		g := grantFrom(r.Context())
		d, e := load(r, g)
		pd := pageData{Page: name, Title: strings.ToUpper(name[:1]) + name[1:], Person: g.Person, Actions: g.AllowActions, Data: d, Error: e}
		tmpl, err := pages()
		if err != nil {
			http.Error(w, "render: "+err.Error(), 500)
			return
		}
		var buf bytes.Buffer
		if err := tmpl[name].Execute(&buf, pd); err != nil {
			http.Error(w, "render: "+err.Error(), 500)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if e != nil && e.Status == 404 {
			w.WriteHeader(404)
		}
		_, _ = w.Write(buf.Bytes())
	}
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12] + "…"
	}
	return h
}

// remaining says how long until an ISO-8601 time.
func remaining(iso string) string {
	t, err := time.Parse(time.RFC3339Nano, iso)
	if err != nil {
		return ""
	}
	d := time.Until(t).Round(time.Second)
	if d <= 0 {
		return "expired"
	}
	return d.String()
}

// jsonView renders any JSON value as nested definition lists and tables:
// tool outputs whose shape the dashboard does not special-case still read
// as a page, escaped.
func jsonView(v any) template.HTML {
	var b strings.Builder
	writeValue(&b, normalize(v), 0)
	return template.HTML(b.String())
}

func normalize(v any) any {
	switch x := v.(type) {
	case json.RawMessage:
		var out any
		if json.Unmarshal(x, &out) == nil {
			return out
		}
		return string(x)
	case nil, string, bool, float64, map[string]any, []any:
		return x
	default:
		raw, err := json.Marshal(x)
		if err != nil {
			return fmt.Sprint(x)
		}
		var out any
		_ = json.Unmarshal(raw, &out)
		return out
	}
}

func writeValue(b *strings.Builder, v any, depth int) {
	if depth > 6 {
		b.WriteString("…")
		return
	}
	switch x := v.(type) {
	case nil:
		b.WriteString(`<span class="muted">—</span>`)
	case string:
		b.WriteString(html.EscapeString(x))
	case bool, float64:
		b.WriteString(html.EscapeString(fmt.Sprint(x)))
	case map[string]any:
		if len(x) == 0 {
			b.WriteString(`<span class="muted">none</span>`)
			return
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteString(`<dl class="kv">`)
		for _, k := range keys {
			b.WriteString("<dt>" + html.EscapeString(k) + "</dt><dd>")
			writeValue(b, x[k], depth+1)
			b.WriteString("</dd>")
		}
		b.WriteString("</dl>")
	case []any:
		if len(x) == 0 {
			b.WriteString(`<span class="muted">none</span>`)
			return
		}
		b.WriteString(`<ol class="list">`)
		for _, it := range x {
			b.WriteString("<li>")
			writeValue(b, it, depth+1)
			b.WriteString("</li>")
		}
		b.WriteString("</ol>")
	default:
		b.WriteString(html.EscapeString(fmt.Sprint(x)))
	}
}
