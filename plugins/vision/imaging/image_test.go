package imaging

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// tinyWebP is a 1×1 lossless WebP (there is no WebP encoder in Go).
const tinyWebP = "UklGRhoAAABXRUJQVlA4TA0AAAAvAAAAEAcQERGIiP4HAA=="

func solid(w, h int, c color.Color) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, c)
		}
	}
	return img
}

func pngBytes(t testing.TB, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func jpegBytes(t testing.TB, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func gifBytes(t testing.TB, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := gif.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func code(err error) string {
	if err == nil {
		return ""
	}
	return errs.From(err).Code
}

func TestDetectFormat(t *testing.T) {
	webp, _ := base64.StdEncoding.DecodeString(tinyWebP)
	red := solid(2, 2, color.RGBA{255, 0, 0, 255})
	cases := []struct {
		name string
		data []byte
		want Format
		ok   bool
	}{
		{"png", pngBytes(t, red), FormatPNG, true},
		{"jpeg", jpegBytes(t, red), FormatJPEG, true},
		{"gif", gifBytes(t, red), FormatGIF, true},
		{"webp", webp, FormatWebP, true},
		{"gif87a", []byte("GIF87a...."), FormatGIF, true},
		{"empty", nil, "", false},
		{"text", []byte("hello world, not an image"), "", false},
		{"png prefix only", []byte("\x89PNG\r\n"), "", false},
		{"riff not webp", []byte("RIFF\x00\x00\x00\x00WAVEfmt "), "", false},
		{"jpeg two bytes", []byte{0xFF, 0xD8}, "", false},
		{"pdf", []byte("%PDF-1.7\n"), "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := DetectFormat(c.data)
			if got != c.want || ok != c.ok {
				t.Fatalf("DetectFormat = %q, %v; want %q, %v", got, ok, c.want, c.ok)
			}
		})
	}
}

func TestPrepareKeepsSmallImages(t *testing.T) {
	raw := pngBytes(t, solid(40, 30, color.RGBA{0, 0, 255, 255}))
	im, err := Prepare(raw, Limits{}, "data")
	if err != nil {
		t.Fatal(err)
	}
	if im.Scaled || im.Width != 40 || im.Height != 30 || !bytes.Equal(im.Data(), raw) || im.MediaType != "image/png" {
		t.Fatalf("small image changed: %+v", im)
	}
	webp, _ := base64.StdEncoding.DecodeString(tinyWebP)
	im, err = Prepare(webp, Limits{}, "data")
	if err != nil || im.Format != FormatWebP || im.MediaType != "image/webp" || im.Width != 1 {
		t.Fatalf("webp: %+v, %v", im, err)
	}
}

func TestPrepareScalesToModelLimits(t *testing.T) {
	cases := []struct {
		name   string
		raw    []byte
		w, h   int
		wantMT string
	}{
		{"wide png", pngBytes(t, solid(3000, 2000, color.White)), 1313, 875, "image/png"},
		{"tall jpeg", jpegBytes(t, solid(1000, 4000, color.Gray{128})), 392, 1568, "image/jpeg"},
		{"square gif", gifBytes(t, solid(1200, 1200, color.Black)), 1072, 1072, "image/png"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			im, err := Prepare(c.raw, Limits{}, "data")
			if err != nil {
				t.Fatal(err)
			}
			if !im.Scaled || im.Width != c.w || im.Height != c.h || im.MediaType != c.wantMT {
				t.Fatalf("got %dx%d %s scaled=%v, want %dx%d %s", im.Width, im.Height, im.MediaType, im.Scaled, c.w, c.h, c.wantMT)
			}
			if max(im.Width, im.Height) > DefaultLimits.MaxLongEdge || im.Width*im.Height > DefaultLimits.MaxPixels {
				t.Fatalf("%dx%d exceeds the model limits", im.Width, im.Height)
			}
			cfg, _, err := image.DecodeConfig(bytes.NewReader(im.Data()))
			if err != nil || cfg.Width != c.w || cfg.Height != c.h {
				t.Fatalf("sent bytes decode to %+v, %v", cfg, err)
			}
		})
	}
}

// withIHDRSize rewrites a PNG's declared size (and the chunk CRC).
func withIHDRSize(raw []byte, w, h uint32) []byte {
	b := append([]byte(nil), raw...)
	binary.BigEndian.PutUint32(b[16:], w)
	binary.BigEndian.PutUint32(b[20:], h)
	binary.BigEndian.PutUint32(b[29:], crc32.ChecksumIEEE(b[12:29]))
	return b
}

func TestPrepareRefuses(t *testing.T) {
	good := pngBytes(t, solid(8, 8, color.White))
	cases := []struct {
		name   string
		raw    []byte
		limits Limits
		code   string
		status int
		constr string
	}{
		{"not an image", []byte("just some text"), Limits{}, errs.UnsupportedMedia, 415, "format"},
		{"empty", nil, Limits{}, errs.UnsupportedMedia, 415, "format"},
		{"truncated png", good[:len(good)-20], Limits{}, errs.UnsupportedMedia, 415, "format"},
		{"corrupt header", append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 40)...), Limits{}, errs.UnsupportedMedia, 415, "format"},
		{"too many bytes", good, Limits{MaxInputBytes: 10}, errs.LimitExceeded, 413, "maxBytes"},
		{"pixel bomb", withIHDRSize(good, 100000, 100000), Limits{}, errs.LimitExceeded, 413, "maxPixels"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Prepare(c.raw, c.limits, "data")
			e := errs.From(err)
			if err == nil || e.Code != c.code || e.Status != c.status || e.Details["constraint"] != c.constr || e.Details["field"] != "data" {
				t.Fatalf("got %v (%+v), want %s %d %s", err, e, c.code, c.status, c.constr)
			}
		})
	}
}

func TestFitWithin(t *testing.T) {
	cases := []struct{ w, h, ww, wh int }{
		{100, 100, 100, 100},
		{1568, 700, 1568, 700},
		{1569, 100, 1568, 99},
		{1072, 1072, 1072, 1072},
		{1073, 1073, 1072, 1072},
		{10000, 1, 1568, 1},
		{1, 10000, 1, 1568},
	}
	for _, c := range cases {
		w, h := FitWithin(c.w, c.h, 1568, 1_150_000)
		if w != c.ww || h != c.wh {
			t.Errorf("FitWithin(%d,%d) = %d,%d; want %d,%d", c.w, c.h, w, h, c.ww, c.wh)
		}
	}
}

func TestDecodeBase64(t *testing.T) {
	raw := []byte{0x89, 'P', 'N', 'G', 0xfb, 0xff}
	std := base64.StdEncoding.EncodeToString(raw)
	cases := []struct {
		name, in string
		ok       bool
	}{
		{"std", std, true},
		{"raw", base64.RawStdEncoding.EncodeToString(raw), true},
		{"url", base64.URLEncoding.EncodeToString(raw), true},
		{"data url", "data:image/png;base64," + std, true},
		{"whitespace", std[:4] + "\n " + std[4:], true},
		{"not base64", "***", false},
		{"data url without base64", "data:image/png," + std, false},
	}
	for _, c := range cases {
		got, err := DecodeBase64(c.in, 100, "data")
		if c.ok && (err != nil || !bytes.Equal(got, raw)) {
			t.Errorf("%s: %v %x", c.name, err, got)
		}
		if !c.ok && code(err) != errs.InvalidInput {
			t.Errorf("%s: want ERR_INVALID_INPUT, got %v", c.name, err)
		}
	}
	if _, err := DecodeBase64(base64.StdEncoding.EncodeToString(make([]byte, 300)), 100, "data"); code(err) != errs.LimitExceeded {
		t.Fatalf("oversized base64: %v", err)
	}
}

func TestReadFileInRoot(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	img := pngBytes(t, solid(4, 4, color.White))
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "shots"), 0o755))
	must(os.WriteFile(filepath.Join(root, "shots", "a.png"), img, 0o644))
	must(os.WriteFile(filepath.Join(outside, "secret.png"), img, 0o644))
	must(os.Symlink(filepath.Join(outside, "secret.png"), filepath.Join(root, "link-out.png")))
	must(os.Symlink(filepath.Join("shots", "a.png"), filepath.Join(root, "link-in.png")))
	must(os.Symlink(outside, filepath.Join(root, "dir-out")))
	cases := []struct {
		name, path, code string
		constraint       string
	}{
		{"relative", "shots/a.png", "", ""},
		{"absolute inside", filepath.Join(root, "shots", "a.png"), "", ""},
		{"symlink inside", "link-in.png", "", ""},
		{"dot-dot", "../" + filepath.Base(outside) + "/secret.png", errs.InvalidInput, "insideRoot"},
		{"sneaky dot-dot", "shots/../../x.png", errs.InvalidInput, "insideRoot"},
		{"absolute outside", filepath.Join(outside, "secret.png"), errs.InvalidInput, "insideRoot"},
		{"symlink out", "link-out.png", errs.InvalidInput, "insideRoot"},
		{"through symlinked dir", "dir-out/secret.png", errs.InvalidInput, "insideRoot"},
		{"missing", "shots/nope.png", errs.NotFound, "exists"},
		{"directory", "shots", errs.InvalidInput, "regularFile"},
		{"empty", "", errs.InvalidInput, "format"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, _, err := ReadFileInRoot(root, c.path, 1<<20, "path")
			if c.code == "" {
				if err != nil || !bytes.Equal(b, img) {
					t.Fatalf("read %s: %v", c.path, err)
				}
				return
			}
			e := errs.From(err)
			if err == nil || e.Code != c.code || e.Details["constraint"] != c.constraint {
				t.Fatalf("read %s: got %v, want %s/%s", c.path, err, c.code, c.constraint)
			}
		})
	}
	if _, _, err := ReadFileInRoot(root, "shots/a.png", 10, "path"); code(err) != errs.LimitExceeded {
		t.Fatalf("oversized file: %v", err)
	}
}

func FuzzDetectFormat(f *testing.F) {
	webp, _ := base64.StdEncoding.DecodeString(tinyWebP)
	f.Add(pngBytes(f, solid(3, 3, color.White)))
	f.Add(jpegBytes(f, solid(3, 3, color.White)))
	f.Add(gifBytes(f, solid(3, 3, color.White)))
	f.Add(webp)
	f.Add([]byte("GIF89a"))
	f.Add([]byte("RIFF0000WEBPVP8 "))
	f.Fuzz(func(t *testing.T, b []byte) {
		fm, ok := DetectFormat(b)
		im, err := Prepare(b, Limits{MaxInputPixels: 1 << 20}, "data")
		if !ok {
			if err == nil {
				t.Fatalf("Prepare accepted bytes DetectFormat refused")
			}
			return
		}
		if err != nil {
			if e, typed := errs.As(err); !typed || e.Status < 400 {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		if im.Format != fm || im.Width < 1 || im.Height < 1 || len(im.Data()) == 0 {
			t.Fatalf("bad image %+v", im)
		}
	})
}
