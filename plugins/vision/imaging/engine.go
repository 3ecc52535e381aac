package imaging

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"sync"
	"time"

	"github.com/anthropics/anthropic-sdk-go"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Engine holds the loaded images, their analysis cache and the Messages
// API client. It is safe for concurrent use.
type Engine struct {
	cfg    Config
	client anthropic.Client

	mu     sync.Mutex
	images map[string]*list.Element // of *entry
	lru    *list.List               // front = most recently used
}

type entry struct {
	img   *Image
	cache map[string]cachedReply
}

type cachedReply struct {
	text  string
	model string
}

// New builds an engine from an explicit configuration.
func New(cfg Config) *Engine {
	cfg = cfg.withDefaults()
	return &Engine{cfg: cfg, client: NewClient(cfg), images: map[string]*list.Element{}, lru: list.New()}
}

// Model returns the model analyses use.
func (e *Engine) Model() string { return e.cfg.Model }

// Configured reports whether an API key is set.
func (e *Engine) Configured() bool { return e.cfg.Configured() }

// Limits returns the effective image limits.
func (e *Engine) Limits() Limits { return e.cfg.Limits }

// LoadImageFromPath loads an image file inside the workspace root. The
// boolean is true when the same bytes were already loaded (same id; the
// cache is kept).
func (e *Engine) LoadImageFromPath(path, name string) (*Image, bool, error) {
	raw, rel, err := ReadFileInRoot(e.cfg.Root, path, e.cfg.Limits.MaxInputBytes, "path")
	if err != nil {
		return nil, false, err
	}
	if name == "" {
		name = rel
	}
	return e.add(raw, name, "path", rel, "path")
}

// LoadImageFromBase64 loads an image given as base64 (or a data: URL).
func (e *Engine) LoadImageFromBase64(data, name string) (*Image, bool, error) {
	raw, err := DecodeBase64(data, e.cfg.Limits.MaxInputBytes, "data")
	if err != nil {
		return nil, false, err
	}
	return e.add(raw, name, "base64", "", "data")
}

// AddImage loads raw image bytes (for embedders that already hold them).
func (e *Engine) AddImage(raw []byte, name string) (*Image, bool, error) {
	return e.add(raw, name, "bytes", "", "data")
}

func (e *Engine) add(raw []byte, name, source, path, field string) (*Image, bool, error) {
	im, err := Prepare(raw, e.cfg.Limits, field)
	if err != nil {
		return nil, false, err
	}
	if name == "" {
		name = im.ID
	}
	im.Name, im.Source, im.Path = name, source, path
	e.mu.Lock()
	defer e.mu.Unlock()
	if el, ok := e.images[im.ID]; ok {
		e.lru.MoveToFront(el)
		return el.Value.(*entry).img, true, nil
	}
	e.images[im.ID] = e.lru.PushFront(&entry{img: im, cache: map[string]cachedReply{}})
	for e.lru.Len() > e.cfg.Limits.MaxImages {
		old := e.lru.Back()
		e.lru.Remove(old)
		delete(e.images, old.Value.(*entry).img.ID)
	}
	e.cfg.Logger.Debug("image loaded", "image_id", im.ID, "format", im.Format, "width", im.Width, "height", im.Height, "scaled", im.Scaled)
	return im, false, nil
}

// GetImage returns a loaded image.
func (e *Engine) GetImage(id string) (*Image, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	el, ok := e.images[id]
	if !ok {
		return nil, imageNotFound("imageId", id)
	}
	e.lru.MoveToFront(el)
	return el.Value.(*entry).img, nil
}

// ListImages returns the loaded images, most recently used first.
func (e *Engine) ListImages() []*Image {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]*Image, 0, e.lru.Len())
	for el := e.lru.Front(); el != nil; el = el.Next() {
		out = append(out, el.Value.(*entry).img)
	}
	return out
}

// RemoveImage drops an image and its cached analyses.
func (e *Engine) RemoveImage(id string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	el, ok := e.images[id]
	if ok {
		e.lru.Remove(el)
		delete(e.images, id)
	}
	return ok
}

func imageNotFound(field, id string) *errs.Error {
	return errs.NotFoundf(errs.NotFound, field, "no image %q is loaded; load it first with vision_load_image (images live in memory until the plugin restarts)", id)
}

// reply is one answer of the hosted model.
type reply struct {
	text    string
	model   string
	tokens  int
	cached  bool
	elapsed time.Duration
}

const systemPrompt = "You are an image analysis service used by software agents. " +
	"Reply with exactly one JSON object and nothing else: no prose, no code fences. " +
	"Describe only what is visible; be objective; never identify real people or guess identities. " +
	"Location hints use the words top-left, top, top-right, left, center, right, bottom-left, bottom, bottom-right; " +
	"when you can estimate a box, give \"box\": [x, y, width, height] as fractions 0 to 1 of the image size."

// ask sends images and a prompt to the model, or answers from the cache of
// the first image when useCache is set and the same question was asked.
func (e *Engine) ask(ctx context.Context, imgs []*Image, prompt string, useCache bool) (reply, error) {
	start := time.Now()
	if !e.cfg.Configured() {
		return reply{}, NotConfiguredError()
	}
	h := sha256.New()
	h.Write([]byte(e.cfg.Model + "\x00" + prompt))
	for _, im := range imgs {
		h.Write([]byte("\x00" + im.ID))
	}
	key := hex.EncodeToString(h.Sum(nil))
	if useCache {
		if c, ok := e.cached(imgs[0].ID, key); ok {
			return reply{text: c.text, model: c.model, cached: true, elapsed: time.Since(start)}, nil
		}
	}
	blocks := make([]anthropic.ContentBlockParamUnion, 0, len(imgs)+1)
	for _, im := range imgs {
		blocks = append(blocks, anthropic.NewImageBlockBase64(im.MediaType, base64.StdEncoding.EncodeToString(im.data)))
	}
	blocks = append(blocks, anthropic.NewTextBlock(prompt))
	msg, err := e.client.Messages.New(ctx, anthropic.MessageNewParams{
		Model:     anthropic.Model(e.cfg.Model),
		MaxTokens: int64(e.cfg.MaxTokens),
		System:    []anthropic.TextBlockParam{{Text: systemPrompt}},
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(blocks...)},
	})
	if err != nil {
		if ctx.Err() != nil {
			return reply{}, errs.New(499, errs.Cancelled, "the analysis was cancelled: "+ctx.Err().Error())
		}
		e.cfg.Logger.Warn("messages call failed", "error", err)
		return reply{}, UpstreamError(err, "image analysis")
	}
	var sb strings.Builder
	for _, b := range msg.Content {
		if b.Type == "text" {
			sb.WriteString(b.Text)
		}
	}
	r := reply{
		text:    sb.String(),
		model:   string(msg.Model),
		tokens:  int(msg.Usage.InputTokens + msg.Usage.OutputTokens),
		elapsed: time.Since(start),
	}
	if r.model == "" {
		r.model = e.cfg.Model
	}
	e.store(imgs[0].ID, key, cachedReply{text: r.text, model: r.model})
	return r, nil
}

func (e *Engine) cached(id, key string) (cachedReply, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	el, ok := e.images[id]
	if !ok {
		return cachedReply{}, false
	}
	c, ok := el.Value.(*entry).cache[key]
	return c, ok
}

func (e *Engine) store(id, key string, c cachedReply) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if el, ok := e.images[id]; ok {
		el.Value.(*entry).cache[key] = c
	}
}

// images resolves ids to loaded images.
func (e *Engine) lookup(fields []string, ids ...string) ([]*Image, error) {
	out := make([]*Image, len(ids))
	for i, id := range ids {
		im, err := e.GetImage(id)
		if err != nil {
			return nil, imageNotFound(fields[i], id)
		}
		out[i] = im
	}
	return out, nil
}
