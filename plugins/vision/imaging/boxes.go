package imaging

import (
	"math"
	"strings"
)

// BoundingBox is a region in normalised coordinates (0 to 1 of the image's
// width and height).
type BoundingBox struct {
	X      float64 `json:"x"`
	Y      float64 `json:"y"`
	Width  float64 `json:"width"`
	Height float64 `json:"height"`
}

// Point is a normalised position.
type Point struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// FullImage is the box of the whole image, used when the model gave no
// usable location.
var FullImage = BoundingBox{0, 0, 1, 1}

// BoxFromHints derives a bounding box from what the model said about an
// item: an explicit "box"/"boundingBox"/"bbox" ([x, y, width, height] or
// an object, in fractions or in pixels of the w×h image sent), else the
// location words ("top-left", "center", "bottom", ...) mapped onto a 3×3
// grid. The second result names the source: "box", "location" or "none".
// Vision models give no pixel-exact boxes; these are coarse by design.
func BoxFromHints(item map[string]any, w, h int) (BoundingBox, string) {
	for _, k := range []string{"box", "boundingBox", "bbox", "bounding_box"} {
		if b, ok := boxValue(item[k], w, h); ok {
			return b, "box"
		}
	}
	for _, k := range []string{"location", "position", "region"} {
		if b, ok := BoxFromLocation(str(item[k])); ok {
			return b, "location"
		}
	}
	return FullImage, "none"
}

func boxValue(v any, w, h int) (BoundingBox, bool) {
	var x, y, bw, bh float64
	switch b := v.(type) {
	case []any:
		if len(b) != 4 {
			return BoundingBox{}, false
		}
		var n [4]float64
		for i, e := range b {
			f, ok := number(e)
			if !ok {
				return BoundingBox{}, false
			}
			n[i] = f
		}
		x, y, bw, bh = n[0], n[1], n[2], n[3]
	case map[string]any:
		var ok [4]bool
		x, ok[0] = number(b["x"])
		y, ok[1] = number(b["y"])
		bw, ok[2] = number(b["width"])
		bh, ok[3] = number(b["height"])
		if !ok[0] || !ok[1] || !ok[2] || !ok[3] {
			return BoundingBox{}, false
		}
	default:
		return BoundingBox{}, false
	}
	if x > 1 || y > 1 || bw > 1 || bh > 1 {
		// Pixels of the image the model saw.
		if w <= 0 || h <= 0 {
			return BoundingBox{}, false
		}
		x, bw = x/float64(w), bw/float64(w)
		y, bh = y/float64(h), bh/float64(h)
	}
	return NormalizeBox(BoundingBox{x, y, bw, bh})
}

// NormalizeBox clamps a box into the unit square and rounds it to four
// decimals; a box with no area left is refused.
func NormalizeBox(b BoundingBox) (BoundingBox, bool) {
	for _, v := range []float64{b.X, b.Y, b.Width, b.Height} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return BoundingBox{}, false
		}
	}
	x0, y0 := clamp01(b.X), clamp01(b.Y)
	x1, y1 := clamp01(b.X+b.Width), clamp01(b.Y+b.Height)
	if x1-x0 <= 0 || y1-y0 <= 0 {
		return BoundingBox{}, false
	}
	return BoundingBox{round4(x0), round4(y0), round4(x1 - x0), round4(y1 - y0)}, true
}

func clamp01(v float64) float64 { return math.Max(0, math.Min(1, v)) }

func round4(v float64) float64 { return math.Round(v*10000) / 10000 }

// BoxFromLocation maps location words onto a 3×3 grid: "top-left" is the
// top-left ninth, "top" the top third across the width, "left" the left
// third down the height, "center" the middle ninth, "full" the image.
func BoxFromLocation(hint string) (BoundingBox, bool) {
	s := strings.ToLower(hint)
	if s == "" {
		return BoundingBox{}, false
	}
	words := strings.FieldsFunc(s, func(r rune) bool { return !(r >= 'a' && r <= 'z') })
	row, col := -1, -1
	whole := false
	for _, w := range words {
		switch w {
		case "top", "upper", "above", "header":
			row = 0
		case "bottom", "lower", "below", "footer":
			row = 2
		case "left":
			col = 0
		case "right":
			col = 2
		case "center", "centre", "middle", "central":
			if row < 0 {
				row = 1
			}
			if col < 0 {
				col = 1
			}
		case "full", "entire", "whole", "throughout", "background", "everywhere":
			whole = true
		}
	}
	// "center left" sets row and col to 1 before "left" moves col to 0;
	// "top center" keeps top. A lone "middle" stays the middle cell.
	third := 1.0 / 3
	switch {
	case row < 0 && col < 0:
		if whole {
			return FullImage, true
		}
		return BoundingBox{}, false
	case row < 0:
		return BoundingBox{round4(float64(col) * third), 0, round4(third), 1}, true
	case col < 0:
		return BoundingBox{0, round4(float64(row) * third), 1, round4(third)}, true
	}
	return BoundingBox{round4(float64(col) * third), round4(float64(row) * third), round4(third), round4(third)}, true
}

// FaceLandmarks places eyes, nose and mouth inside a face box by the usual
// proportions of a face, shifted towards the side a profile faces. They
// are estimates derived from the box, not measurements.
func FaceLandmarks(b BoundingBox, orientation string) map[string]Point {
	shift := 0.0
	o := strings.ToLower(orientation)
	switch {
	case strings.Contains(o, "left") && strings.Contains(o, "three"):
		shift = -0.1
	case strings.Contains(o, "right") && strings.Contains(o, "three"):
		shift = 0.1
	case strings.Contains(o, "left"):
		shift = -0.2
	case strings.Contains(o, "right"):
		shift = 0.2
	}
	at := func(fx, fy float64) Point {
		return Point{round4(b.X + b.Width*clamp01(fx+shift)), round4(b.Y + b.Height*fy)}
	}
	return map[string]Point{
		"leftEye":    at(0.3, 0.38),
		"rightEye":   at(0.7, 0.38),
		"nose":       at(0.5, 0.58),
		"mouthLeft":  at(0.36, 0.78),
		"mouthRight": at(0.64, 0.78),
	}
}
