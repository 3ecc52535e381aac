package imaging

import (
	"github.com/cairn-mcp/cairn/sdk/plainfile"

	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/image/draw"
	"golang.org/x/image/webp"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Format is an image format recognised by its magic bytes.
type Format string

// The formats the hosted model accepts.
const (
	FormatPNG  Format = "png"
	FormatJPEG Format = "jpeg"
	FormatGIF  Format = "gif"
	FormatWebP Format = "webp"
)

// MediaType returns the MIME type of f.
func (f Format) MediaType() string { return "image/" + string(f) }

// Limits bound what an image may be and what is sent to the model.
type Limits struct {
	// MaxInputBytes refuses larger files or base64 payloads.
	MaxInputBytes int
	// MaxInputPixels refuses images whose header declares more pixels
	// (a decompression-bomb guard, checked before decoding).
	MaxInputPixels int
	// MaxLongEdge and MaxPixels are the model's limits: larger images are
	// scaled down, keeping the aspect ratio, before they are sent.
	MaxLongEdge int
	MaxPixels   int
	// MaxSendBytes is the API's per-image payload limit; an image still
	// larger after scaling is re-encoded as JPEG.
	MaxSendBytes int
	// MaxImages held in memory; the least recently used is dropped.
	MaxImages int
}

// DefaultLimits: 20 MiB input, 50 megapixels declared, and the hosted
// model's documented optimum of a 1568 px long edge and about 1.15
// megapixels (larger images are downscaled by the API anyway, costing
// latency and tokens), 5 MiB per image payload, 128 images in memory.
var DefaultLimits = Limits{
	MaxInputBytes:  20 << 20,
	MaxInputPixels: 50_000_000,
	MaxLongEdge:    1568,
	MaxPixels:      1_150_000,
	MaxSendBytes:   5 << 20,
	MaxImages:      128,
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	if l.MaxInputBytes > 0 {
		d.MaxInputBytes = l.MaxInputBytes
	}
	if l.MaxInputPixels > 0 {
		d.MaxInputPixels = l.MaxInputPixels
	}
	if l.MaxLongEdge > 0 {
		d.MaxLongEdge = l.MaxLongEdge
	}
	if l.MaxPixels > 0 {
		d.MaxPixels = l.MaxPixels
	}
	if l.MaxSendBytes > 0 {
		d.MaxSendBytes = l.MaxSendBytes
	}
	if l.MaxImages > 0 {
		d.MaxImages = l.MaxImages
	}
	return d
}

// DetectFormat recognises PNG, JPEG, GIF and WebP by their magic bytes.
func DetectFormat(b []byte) (Format, bool) {
	switch {
	case len(b) >= 8 && string(b[:8]) == "\x89PNG\r\n\x1a\n":
		return FormatPNG, true
	case len(b) >= 3 && b[0] == 0xFF && b[1] == 0xD8 && b[2] == 0xFF:
		return FormatJPEG, true
	case len(b) >= 6 && (string(b[:6]) == "GIF87a" || string(b[:6]) == "GIF89a"):
		return FormatGIF, true
	case len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP":
		return FormatWebP, true
	}
	return "", false
}

// Image is a loaded image: what was given and what is sent to the model.
type Image struct {
	ID             string `json:"imageId"`
	Name           string `json:"name"`
	Source         string `json:"source"`
	Path           string `json:"path,omitempty"`
	Format         Format `json:"format"`
	MediaType      string `json:"mediaType"`
	Width          int    `json:"width"`
	Height         int    `json:"height"`
	OriginalWidth  int    `json:"originalWidth"`
	OriginalHeight int    `json:"originalHeight"`
	OriginalBytes  int    `json:"originalBytes"`
	Bytes          int    `json:"bytes"`
	Scaled         bool   `json:"scaled"`
	SHA256         string `json:"sha256"`
	LoadedAt       string `json:"loadedAt"`

	// data is what is sent (MediaType); thumb is a small RGBA copy for the
	// local colour and pixel measurements.
	data  []byte
	thumb *image.RGBA
}

// Data returns the bytes sent to the model (in MediaType).
func (im *Image) Data() []byte { return im.data }

// thumbSize is the edge of the thumbnail kept for local measurements.
const thumbSize = 64

func tooLarge(field string, size, limit int) *errs.Error {
	return errs.Newf(413, errs.LimitExceeded, "the image is %d bytes; the limit is %d bytes (%d MiB): pass a smaller or compressed image", size, limit, limit>>20).
		With("field", field).With("constraint", "maxBytes").With("limit", limit)
}

func notAnImage(field, why string) *errs.Error {
	return errs.Newf(415, errs.UnsupportedMedia, "%s: only PNG, JPEG, GIF and WebP images are accepted", why).
		With("field", field).With("constraint", "format")
}

// Prepare checks raw image bytes and makes what is sent to the model:
// format by magic bytes, size and declared pixel count within limits, a
// full decode (so a truncated file is refused now, not by the model), and a
// scale-down to MaxLongEdge and MaxPixels. field names the input the bytes
// came from in errors.
func Prepare(raw []byte, limits Limits, field string) (*Image, error) {
	limits = limits.withDefaults()
	if len(raw) > limits.MaxInputBytes {
		return nil, tooLarge(field, len(raw), limits.MaxInputBytes)
	}
	if len(raw) == 0 {
		return nil, notAnImage(field, "the image is empty")
	}
	f, ok := DetectFormat(raw)
	if !ok {
		return nil, notAnImage(field, "the data is not a recognised image (no PNG, JPEG, GIF or WebP signature)")
	}
	cfg, err := decodeConfig(f, raw)
	if err != nil {
		return nil, notAnImage(field, fmt.Sprintf("the %s header is corrupt (%v)", f, err))
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return nil, notAnImage(field, "the image has no pixels")
	}
	if int64(cfg.Width)*int64(cfg.Height) > int64(limits.MaxInputPixels) {
		return nil, errs.Newf(413, errs.LimitExceeded, "the image is %dx%d pixels; the limit is %d pixels: pass a smaller image", cfg.Width, cfg.Height, limits.MaxInputPixels).
			With("field", field).With("constraint", "maxPixels").With("limit", limits.MaxInputPixels)
	}
	img, err := decode(f, raw)
	if err != nil {
		return nil, notAnImage(field, fmt.Sprintf("the %s data is corrupt or truncated (%v)", f, err))
	}
	sum := sha256.Sum256(raw)
	im := &Image{
		ID:            "img_" + hex.EncodeToString(sum[:8]),
		Format:        f,
		MediaType:     f.MediaType(),
		OriginalBytes: len(raw),
		SHA256:        hex.EncodeToString(sum[:]),
		LoadedAt:      time.Now().UTC().Format("2006-01-02T15:04:05.000Z"),
	}
	b := img.Bounds()
	im.OriginalWidth, im.OriginalHeight = b.Dx(), b.Dy()
	w, h := FitWithin(b.Dx(), b.Dy(), limits.MaxLongEdge, limits.MaxPixels)
	im.Width, im.Height = w, h
	switch {
	case w != b.Dx() || h != b.Dy():
		im.Scaled = true
		img = Scale(img, w, h)
		im.data, im.MediaType, err = encode(img, f)
	default:
		im.data = raw
	}
	if err != nil {
		return nil, fmt.Errorf("re-encode scaled image: %w", err)
	}
	if len(im.data) > limits.MaxSendBytes {
		// Still too large for one image block (a big GIF or noisy PNG):
		// JPEG keeps it under the payload limit at these dimensions.
		var buf bytes.Buffer
		if err := jpeg.Encode(&buf, flatten(img), &jpeg.Options{Quality: 85}); err != nil {
			return nil, fmt.Errorf("re-encode image: %w", err)
		}
		im.data, im.MediaType = buf.Bytes(), "image/jpeg"
	}
	im.Bytes = len(im.data)
	tw, th := thumbDims(w, h)
	im.thumb = toRGBA(Scale(img, tw, th))
	return im, nil
}

func thumbDims(w, h int) (int, int) {
	if w >= h {
		return thumbSize, max(1, h*thumbSize/w)
	}
	return max(1, w*thumbSize/h), thumbSize
}

// FitWithin returns the largest size with w:h's aspect ratio whose long
// edge is at most maxEdge and whose area is at most maxPixels; never larger
// than w×h.
func FitWithin(w, h, maxEdge, maxPixels int) (int, int) {
	f := 1.0
	if long := max(w, h); long > maxEdge {
		f = float64(maxEdge) / float64(long)
	}
	if area := float64(w) * float64(h) * f * f; area > float64(maxPixels) {
		f *= math.Sqrt(float64(maxPixels) / area)
	}
	if f >= 1 {
		return w, h
	}
	nw, nh := int(math.Floor(float64(w)*f)), int(math.Floor(float64(h)*f))
	return max(1, nw), max(1, nh)
}

// Scale resizes img to w×h with Catmull-Rom resampling, which keeps text
// legible when downscaling.
func Scale(img image.Image, w, h int) image.Image {
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.CatmullRom.Scale(dst, dst.Bounds(), img, img.Bounds(), draw.Src, nil)
	return dst
}

func toRGBA(img image.Image) *image.RGBA {
	if r, ok := img.(*image.RGBA); ok {
		return r
	}
	b := img.Bounds()
	dst := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(dst, dst.Bounds(), img, b.Min, draw.Src)
	return dst
}

// flatten composites img on white, for JPEG which has no alpha.
func flatten(img image.Image) image.Image {
	b := img.Bounds()
	dst := image.NewRGBA(image.Rect(0, 0, b.Dx(), b.Dy()))
	draw.Draw(dst, dst.Bounds(), &image.Uniform{C: color.White}, image.Point{}, draw.Src)
	draw.Draw(dst, dst.Bounds(), img, b.Min, draw.Over)
	return dst
}

func decodeConfig(f Format, raw []byte) (image.Config, error) {
	r := bytes.NewReader(raw)
	switch f {
	case FormatPNG:
		return png.DecodeConfig(r)
	case FormatJPEG:
		return jpeg.DecodeConfig(r)
	case FormatGIF:
		return gif.DecodeConfig(r)
	default:
		return webp.DecodeConfig(r)
	}
}

func decode(f Format, raw []byte) (image.Image, error) {
	r := bytes.NewReader(raw)
	switch f {
	case FormatPNG:
		return png.Decode(r)
	case FormatJPEG:
		return jpeg.Decode(r)
	case FormatGIF:
		// The first frame: the model sees a still image either way.
		return gif.Decode(r)
	default:
		return webp.Decode(r)
	}
}

// encode writes a scaled image: photos stay JPEG, everything else becomes
// PNG (there is no WebP encoder in the standard library or x/image).
func encode(img image.Image, from Format) ([]byte, string, error) {
	var buf bytes.Buffer
	if from == FormatJPEG {
		err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 90})
		return buf.Bytes(), "image/jpeg", err
	}
	err := (&png.Encoder{CompressionLevel: png.DefaultCompression}).Encode(&buf, img)
	return buf.Bytes(), "image/png", err
}

// DecodeBase64 accepts standard or URL-safe base64, padded or not, with or
// without a data: URL prefix and whitespace. It refuses payloads whose
// decoded size would exceed maxBytes before decoding them.
func DecodeBase64(s string, maxBytes int, field string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "data:") {
		i := strings.Index(s, ",")
		if i < 0 || !strings.Contains(s[:i], ";base64") {
			return nil, errs.Invalid(field, "contentEncoding", "a data: URL must be base64 encoded (data:image/png;base64,...)")
		}
		s = s[i+1:]
	}
	if strings.ContainsAny(s, " \t\r\n") {
		s = strings.Map(func(r rune) rune {
			if r == ' ' || r == '\t' || r == '\r' || r == '\n' {
				return -1
			}
			return r
		}, s)
	}
	if n := base64.RawStdEncoding.DecodedLen(len(s)); n > maxBytes+2 {
		return nil, tooLarge(field, n, maxBytes)
	}
	s = strings.TrimRight(s, "=")
	enc := base64.RawStdEncoding
	if strings.ContainsAny(s, "-_") {
		enc = base64.RawURLEncoding
	}
	b, err := enc.DecodeString(s)
	if err != nil {
		return nil, errs.Invalid(field, "contentEncoding", "data is not valid base64: "+err.Error())
	}
	return b, nil
}

// ReadFileInRoot reads a file that must lie inside root: relative paths are
// resolved against root, absolute ones must point inside it, and symbolic
// links may not lead out (os.Root enforces this for every path component).
func ReadFileInRoot(root, path string, maxBytes int, field string) ([]byte, string, error) {
	if root == "" {
		return nil, "", errs.New(503, errs.NotConfigured, "no workspace root is configured; set CAIRN_ROOT")
	}
	if strings.ContainsRune(path, 0) || strings.TrimSpace(path) == "" {
		return nil, "", errs.Invalid(field, "format", "path must be a non-empty file path")
	}
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return nil, "", fmt.Errorf("workspace root: %w", err)
	}
	rel := path
	if filepath.IsAbs(path) {
		rel, err = filepath.Rel(absRoot, filepath.Clean(path))
		if err != nil || !filepath.IsLocal(rel) {
			// The root may be reached through a symlinked prefix (/tmp on
			// macOS): compare the resolved forms before refusing.
			r2, e2 := relResolved(absRoot, path)
			if e2 != nil {
				return nil, "", outsideRoot(field, path)
			}
			rel = r2
		}
	}
	rel = filepath.Clean(rel)
	if !filepath.IsLocal(rel) {
		return nil, "", outsideRoot(field, path)
	}
	r, err := os.OpenRoot(absRoot)
	if err != nil {
		return nil, "", fmt.Errorf("open workspace root: %w", err)
	}
	defer r.Close()
	// Stat through the root first (symlinks resolved inside it, escapes
	// refused): a FIFO, device or directory is refused before anything is
	// opened, so no open can block, and a file with another hard link (whose
	// other name may lie outside the root) is refused too.
	st, err := r.Stat(rel)
	if err != nil {
		return nil, "", rootErr(err, field, path, rel)
	}
	if err := checkPlainFile(st, field, rel); err != nil {
		return nil, "", err
	}
	// O_NONBLOCK keeps even a file swapped for a FIFO after the Stat from
	// blocking; the handle is checked again and must be the same file.
	fh, err := r.OpenFile(rel, os.O_RDONLY|plainfile.OpenNonblock, 0)
	if err != nil {
		return nil, "", rootErr(err, field, path, rel)
	}
	defer fh.Close()
	st2, err := fh.Stat()
	if err != nil {
		return nil, "", fmt.Errorf("stat %s: %w", rel, err)
	}
	if err := checkPlainFile(st2, field, rel); err != nil {
		return nil, "", err
	}
	if !os.SameFile(st, st2) {
		return nil, "", errs.Invalid(field, "stable", rel+" changed while it was being opened; try again")
	}
	st = st2
	if st.Size() > int64(maxBytes) {
		return nil, "", tooLarge(field, int(min(st.Size(), math.MaxInt32)), maxBytes)
	}
	b, err := io.ReadAll(io.LimitReader(fh, int64(maxBytes)+1))
	if err != nil {
		return nil, "", fmt.Errorf("read %s: %w", rel, err)
	}
	if len(b) > maxBytes {
		return nil, "", tooLarge(field, len(b), maxBytes)
	}
	return b, filepath.ToSlash(rel), nil
}

// rootErr types an error of a lookup through the root.
func rootErr(err error, field, path, rel string) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errs.NotFoundf(errs.NotFound, field, "no file %s in the workspace root", rel)
	case strings.Contains(err.Error(), "escapes") || strings.Contains(err.Error(), "outside"):
		return outsideRoot(field, path)
	default:
		return errs.Invalid(field, "readable", fmt.Sprintf("cannot open %s: %v", rel, err))
	}
}

// checkPlainFile refuses anything but a regular file with a single link.
func checkPlainFile(st fs.FileInfo, field, rel string) error {
	if !st.Mode().IsRegular() {
		return errs.Invalidf(field, "regularFile", "%s is not a regular file (%s); pass an image file", rel, plainfile.Kind(st.Mode()))
	}
	if n, ok := plainfile.LinkCount(st); ok && n > 1 {
		return errs.Invalidf(field, "singleLink", "%s has %d hard links; a hard-linked file may be a file from outside the workspace root, so it is refused (copy the image instead)", rel, n).With("links", n)
	}
	return nil
}

func relResolved(absRoot, path string) (string, error) {
	rr, err := filepath.EvalSymlinks(absRoot)
	if err != nil {
		return "", err
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(path))
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(rr, filepath.Join(dir, filepath.Base(path)))
	if err != nil || !filepath.IsLocal(rel) {
		return "", errors.New("outside")
	}
	return rel, nil
}

func outsideRoot(field, path string) *errs.Error {
	return errs.Newf(400, errs.InvalidInput, "%s is outside the workspace root; pass a path inside CAIRN_ROOT (symbolic links may not lead out of it)", path).
		With("field", field).With("constraint", "insideRoot")
}
