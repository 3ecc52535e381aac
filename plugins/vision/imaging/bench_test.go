package imaging

import (
	"image"
	"image/color"
	"math/rand"
	"testing"
)

// photo is a gradient with noise, so encoders cannot cheat on flat colour.
func photo(w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewSource(1))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			n := uint8(r.Intn(32))
			img.SetRGBA(x, y, color.RGBA{uint8(x*255/w) + n, uint8(y*255/h) + n, 128 + n, 255})
		}
	}
	return img
}

// BenchmarkPrepare measures check, decode, scale to the model's limits and
// re-encode for a 12-megapixel photo and a small screenshot-sized PNG.
func BenchmarkPrepare(b *testing.B) {
	big := photo(4000, 3000)
	cases := []struct {
		name string
		raw  []byte
	}{
		{"jpeg_4000x3000_scaled", jpegBytes(b, big)},
		{"png_4000x3000_scaled", pngBytes(b, big)},
		{"png_1024x768_kept", pngBytes(b, photo(1024, 768))},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.raw)))
			for i := 0; i < b.N; i++ {
				if _, err := Prepare(c.raw, Limits{}, "data"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
