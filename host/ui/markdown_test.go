package ui

import (
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/net/html"
)

// activeParts lists what in rendered HTML could run: script-capable
// elements, on* attributes, addresses with a scheme other than http,
// https or mailto.
func activeParts(s string) []string {
	var found []string
	z := html.NewTokenizer(strings.NewReader(s))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return found
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			switch tok.Data {
			case "script", "iframe", "object", "embed", "style", "form", "svg", "math", "base", "meta", "link":
				found = append(found, "<"+tok.Data+">")
			}
			for _, a := range tok.Attr {
				if strings.HasPrefix(strings.ToLower(a.Key), "on") {
					found = append(found, a.Key)
				}
				if (a.Key == "href" || a.Key == "src") && a.Val != "" && !safeURL(a.Val) {
					found = append(found, a.Key+"="+a.Val)
				}
			}
		}
	}
}

// Hostile Markdown renders inert: raw HTML shows as text, no element gets
// an on* attribute, no address keeps a script scheme (docs/decisions.md D25).
func TestMarkdownIsInert(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"},
		{"<img src=x onerror=alert(1)>", "&lt;img src=x onerror=alert(1)&gt;"},
		{"hi <b onmouseover=alert(1)>there</b>", "hi &lt;b onmouseover=alert(1)&gt;there&lt;/b&gt;"},
		{"[x](javascript:alert(1))", `<a href="">x</a>`},
		{"[x](JaVaScRiPt:alert(1))", `<a href="">x</a>`},
		{"[x](&#106;avascript:alert(1))", `<a href="">x</a>`},
		{"[x](vbscript:msgbox)", `<a href="">x</a>`},
		{"<javascript:alert(1)>", "<p>javascript:alert(1)</p>"},
		{"![i](data:text/html,<script>alert(1)</script>)", `src=""`},
		{"<iframe src=https://evil.example></iframe>", "&lt;iframe"},
	} {
		got := string(renderMarkdown(tc.src))
		if !strings.Contains(got, tc.want) {
			t.Errorf("%q rendered %q, want it to contain %q", tc.src, got, tc.want)
		}
		if bad := activeParts(got); len(bad) > 0 {
			t.Errorf("%q rendered %q, which holds %q", tc.src, got, bad)
		}
	}
}

// Plain Markdown renders as a page: headings, lists, emphasis, code,
// tables and safe links.
func TestMarkdownRendersTheUsualThings(t *testing.T) {
	src := "## Plan\n\n- parse **numbers**\n- see [T-2](/task/T-2) and https://example.com\n\n`go test`\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n[mail](mailto:a@example.com)"
	got := string(renderMarkdown(src))
	for _, want := range []string{"<h2>Plan</h2>", "<li>parse <strong>numbers</strong></li>", `<a href="/task/T-2">T-2</a>`,
		`<a href="https://example.com">https://example.com</a>`, "<code>go test</code>", "<td>1</td>", `<a href="mailto:a@example.com">`} {
		if !strings.Contains(got, want) {
			t.Errorf("rendered %q, want %q in it", got, want)
		}
	}
}

func TestSafeURL(t *testing.T) {
	for u, want := range map[string]bool{
		"/task/T-1": true, "https://a.example/x": true, "http://a.example": true, "mailto:a@b.example": true, "#x": true, "docs/a.md": true,
		"javascript:alert(1)": false, "JAVASCRIPT:x": false, "data:text/html,x": false, "vbscript:x": false, "file:///etc/passwd": false,
		"java\tscript:x": false, "livescript:x": false,
	} {
		if got := safeURL(u); got != want {
			t.Errorf("safeURL(%q) = %v, want %v", u, got, want)
		}
	}
}

// A description past the limit is cut on a character boundary, with a note.
func TestMarkdownLimit(t *testing.T) {
	src := "a" + strings.Repeat("é", MarkdownLimit) // two bytes each: the limit falls inside one
	got := string(renderMarkdown(src))
	if !utf8.ValidString(got) || !strings.Contains(got, "cut at 64 KiB") {
		t.Errorf("a long description rendered %d bytes, valid UTF-8 %v", len(got), utf8.ValidString(got))
	}
}
