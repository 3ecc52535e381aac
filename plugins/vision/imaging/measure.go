package imaging

import (
	"fmt"
	"image"
	"math"
	"sort"
)

// MeasuredColor is a colour counted in the image's pixels.
type MeasuredColor struct {
	Hex        string  `json:"hex"`
	Percentage float64 `json:"percentage"`
}

// ColorMeasurements are computed locally from the pixels, beside the
// model's reading of the colours.
type ColorMeasurements struct {
	Dominant []MeasuredColor `json:"dominant"`
	// Brightness is the mean luma, 0 (black) to 1 (white).
	Brightness float64 `json:"brightness"`
	// Contrast is the RMS contrast of the luma, 0 to about 0.5.
	Contrast float64 `json:"contrast"`
}

// MeasureColors quantises the thumbnail to 4 bits per channel and reports
// the most frequent colours (each as its bucket's mean), brightness and
// contrast.
func MeasureColors(img *image.RGBA, top int) ColorMeasurements {
	type acc struct{ n, r, g, b int }
	buckets := map[int]*acc{}
	var sum, sumSq float64
	b := img.Bounds()
	total := b.Dx() * b.Dy()
	if total == 0 {
		return ColorMeasurements{Dominant: []MeasuredColor{}}
	}
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			i := img.PixOffset(x, y)
			r, g, bl := int(img.Pix[i]), int(img.Pix[i+1]), int(img.Pix[i+2])
			k := (r>>4)<<8 | (g>>4)<<4 | bl>>4
			a := buckets[k]
			if a == nil {
				a = &acc{}
				buckets[k] = a
			}
			a.n++
			a.r += r
			a.g += g
			a.b += bl
			l := (0.2126*float64(r) + 0.7152*float64(g) + 0.0722*float64(bl)) / 255
			sum += l
			sumSq += l * l
		}
	}
	list := make([]*acc, 0, len(buckets))
	for _, a := range buckets {
		list = append(list, a)
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].n != list[j].n {
			return list[i].n > list[j].n
		}
		return list[i].r+list[i].g+list[i].b < list[j].r+list[j].g+list[j].b
	})
	out := ColorMeasurements{Dominant: []MeasuredColor{}}
	for i := 0; i < len(list) && i < top; i++ {
		a := list[i]
		out.Dominant = append(out.Dominant, MeasuredColor{
			Hex:        fmt.Sprintf("#%02x%02x%02x", a.r/a.n, a.g/a.n, a.b/a.n),
			Percentage: math.Round(float64(a.n)*1000/float64(total)) / 10,
		})
	}
	mean := sum / float64(total)
	out.Brightness = round4(mean)
	out.Contrast = round4(math.Sqrt(math.Max(0, sumSq/float64(total)-mean*mean)))
	return out
}

// PixelSimilarity compares two thumbnails after resampling both to 32×32
// grey: 1 minus the mean absolute difference of the luma, so 1 means the
// same picture and values near 0 opposite ones. It is a cheap, model-free
// check that complements the model's judgement.
func PixelSimilarity(a, b *image.RGBA) float64 {
	ga, gb := grey32(a), grey32(b)
	var diff float64
	for i := range ga {
		diff += math.Abs(ga[i] - gb[i])
	}
	return round4(1 - diff/float64(len(ga)))
}

func grey32(img *image.RGBA) []float64 {
	const n = 32
	out := make([]float64, n*n)
	b := img.Bounds()
	for y := 0; y < n; y++ {
		for x := 0; x < n; x++ {
			sx := b.Min.X + x*b.Dx()/n
			sy := b.Min.Y + y*b.Dy()/n
			i := img.PixOffset(sx, sy)
			out[y*n+x] = (0.2126*float64(img.Pix[i]) + 0.7152*float64(img.Pix[i+1]) + 0.0722*float64(img.Pix[i+2])) / 255
		}
	}
	return out
}
