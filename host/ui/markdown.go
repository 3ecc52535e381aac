package ui

// Markdown as the task page shows it (docs/decisions.md D25): an agent's
// description or thought is Markdown, and it is text someone else wrote.
// It is rendered on the server by goldmark, whose HTML renderer escapes
// every text and attribute and is never given html.WithUnsafe. Before
// rendering, the parsed tree is made inert: raw HTML (a block or inline)
// becomes literal text, so a <script> or an <img onerror> reads as what was
// written; a link or an image keeps its address only when it is relative or
// http, https or mailto, so a javascript: or data: address is dropped. The
// output holds only elements goldmark writes for Markdown constructs.

import (
	"bytes"
	"html/template"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// MarkdownLimit bounds the bytes of Markdown rendered for one field; the
// rest shows as a note (a task's description is bounded by its tool, this
// only keeps a page's cost known).
const MarkdownLimit = 64 << 10

// md is the renderer: CommonMark with GitHub's tables, strikethrough, task
// lists and bare-URL links; no raw HTML (goldmark's default, never
// html.WithUnsafe).
var md = goldmark.New(goldmark.WithExtensions(extension.GFM))

// renderMarkdown renders src as safe HTML.
func renderMarkdown(src string) template.HTML {
	cut := len(src) > MarkdownLimit
	if cut {
		n := MarkdownLimit
		for n > 0 && !utf8.RuneStart(src[n]) { // never halve a character
			n--
		}
		src = src[:n]
	}
	source := []byte(src)
	doc := md.Parser().Parse(text.NewReader(source))
	inert(doc, source)
	var b bytes.Buffer
	if err := md.Renderer().Render(&b, source, doc); err != nil {
		return template.HTML("<p>" + template.HTMLEscapeString(src) + "</p>")
	}
	if cut {
		b.WriteString(`<p class="muted">… (cut at 64 KiB)</p>`)
	}
	return template.HTML(b.String()) // goldmark's output: escaped text, no raw HTML
}

// inert rewrites the parsed tree so that nothing in it runs: raw HTML
// becomes text, unsafe addresses are dropped. Replacements are made after
// the walk, which must not see its tree change under it.
func inert(doc ast.Node, source []byte) {
	type swap struct{ old, new ast.Node }
	var swaps []swap
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch x := n.(type) {
		case *ast.Link:
			if !safeURL(string(x.Destination)) {
				x.Destination = nil
			}
		case *ast.Image:
			if !safeURL(string(x.Destination)) {
				x.Destination = nil
			}
		case *ast.AutoLink:
			if !safeURL(string(x.URL(source))) { // its address is its text: keep the text
				swaps = append(swaps, swap{x, literal(x.Label(source))})
			}
		case *ast.RawHTML:
			var raw []byte
			for i := range x.Segments.Len() {
				seg := x.Segments.At(i)
				raw = append(raw, seg.Value(source)...)
			}
			swaps = append(swaps, swap{x, literal(raw)})
		case *ast.HTMLBlock:
			code := ast.NewCodeBlock() // shown as code, escaped
			lines := x.Lines()
			if x.HasClosure() {
				lines.Append(x.ClosureLine)
			}
			code.SetLines(lines)
			swaps = append(swaps, swap{x, code})
		}
		return ast.WalkContinue, nil
	})
	for _, s := range swaps {
		s.old.Parent().ReplaceChild(s.old.Parent(), s.old, s.new)
	}
}

// literal is text goldmark writes escaped, as it stands.
func literal(b []byte) ast.Node {
	s := ast.NewString(b)
	s.SetRaw(true)
	return s
}

// safeURL accepts relative addresses and the http, https and mailto
// schemes only.
func safeURL(u string) bool {
	p, err := url.Parse(strings.TrimSpace(u))
	if err != nil {
		return false
	}
	switch strings.ToLower(p.Scheme) {
	case "", "http", "https", "mailto":
		return true
	}
	return false
}
