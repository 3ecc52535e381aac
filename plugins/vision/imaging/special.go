package imaging

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// Meta is what every specialised result reports about the call.
type Meta struct {
	Model            string `json:"model"`
	TokensUsed       int    `json:"tokensUsed"`
	ProcessingTimeMs int64  `json:"processingTimeMs"`
	Cached           bool   `json:"cached"`
}

func metaOf(r reply) Meta {
	return Meta{Model: r.model, TokensUsed: r.tokens, ProcessingTimeMs: r.elapsed.Milliseconds(), Cached: r.cached}
}

// Options common to the specialised analyses.
type Options struct {
	// NoCache skips the analysis cache (the specification's useCache=false).
	NoCache bool
}

// runOne loads the image, asks and parses.
func (e *Engine) runOne(ctx context.Context, imageID, prompt string, noCache bool) (*Image, map[string]any, bool, reply, error) {
	imgs, err := e.lookup([]string{"imageId"}, imageID)
	if err != nil {
		return nil, nil, false, reply{}, err
	}
	r, err := e.ask(ctx, imgs, prompt, !noCache)
	if err != nil {
		return nil, nil, false, reply{}, err
	}
	obj, parsed := ParseReply(r.text)
	return imgs[0], obj, parsed, r, nil
}

// ObjectCategories are the categories detectObjectsWithBoundingBoxes
// filters on (the model may also answer "other").
var ObjectCategories = []string{"person", "vehicle", "animal", "furniture", "electronics", "nature", "food", "building", "clothing"}

// Object detection defaults and bounds (specification part 8).
const (
	DefaultConfidenceThreshold = 0.5
	DefaultMaxObjects          = 50
	MaxMaxObjects              = 200
)

// DetectOptions are detectObjectsWithBoundingBoxes' options.
type DetectOptions struct {
	Options
	// ConfidenceThreshold drops objects below it (nil means 0.5).
	ConfidenceThreshold *float64
	// MaxObjects keeps at most this many, most confident first (0 means 50).
	MaxObjects int
	// Categories keeps only these categories (nil means all).
	Categories []string
}

// DetectedObject is the specification's DetectedObject record.
type DetectedObject struct {
	ID          string      `json:"id"`
	Label       string      `json:"label"`
	Category    string      `json:"category"`
	Confidence  float64     `json:"confidence"`
	BoundingBox BoundingBox `json:"boundingBox"`
	Count       int         `json:"count"`
	Location    string      `json:"location"`
	// BoxSource says where the box came from: "box" (the model estimated
	// one), "location" (a location word on a 3×3 grid) or "none" (the
	// whole image).
	BoxSource string `json:"boxSource"`
}

// DetectionResult is detectObjectsWithBoundingBoxes' result.
type DetectionResult struct {
	Success       bool             `json:"success"`
	ImageID       string           `json:"imageId"`
	TotalDetected int              `json:"totalDetected"`
	Objects       []DetectedObject `json:"objects"`
	Meta
}

// ValidateDetectOptions applies the rules of the options.
func ValidateDetectOptions(o DetectOptions) (threshold float64, maxObjects int, cats map[string]bool, err error) {
	threshold = DefaultConfidenceThreshold
	if o.ConfidenceThreshold != nil {
		threshold = *o.ConfidenceThreshold
		if math.IsNaN(threshold) || threshold < 0 || threshold > 1 {
			return 0, 0, nil, errs.Invalid("confidenceThreshold", "maximum", "confidenceThreshold must be between 0 and 1")
		}
	}
	maxObjects = o.MaxObjects
	if maxObjects == 0 {
		maxObjects = DefaultMaxObjects
	}
	if maxObjects < 1 || maxObjects > MaxMaxObjects {
		return 0, 0, nil, errs.Invalidf("maxObjects", "maximum", "maxObjects must be 1 to %d", MaxMaxObjects)
	}
	if o.Categories != nil {
		cats = map[string]bool{}
		for i, c := range o.Categories {
			ok := false
			for _, k := range ObjectCategories {
				if strings.EqualFold(c, k) {
					cats[k], ok = true, true
				}
			}
			if !ok {
				return 0, 0, nil, errs.Invalidf(fmt.Sprintf("categories[%d]", i), "enum", "category %q is not one of %s", c, strings.Join(ObjectCategories, ", "))
			}
		}
	}
	return threshold, maxObjects, cats, nil
}

// DetectObjectsWithBoundingBoxes lists objects with normalised boxes
// derived from the model's location hints.
func (e *Engine) DetectObjectsWithBoundingBoxes(ctx context.Context, imageID string, o DetectOptions) (*DetectionResult, error) {
	threshold, maxObjects, cats, err := ValidateDetectOptions(o)
	if err != nil {
		return nil, err
	}
	prompt := prompts[Objects]
	if cats != nil {
		var names []string
		for _, k := range ObjectCategories {
			if cats[k] {
				names = append(names, k)
			}
		}
		prompt += "\nOnly list objects of these categories: " + strings.Join(names, ", ") + "."
	}
	prompt += fmt.Sprintf("\nList at most %d objects, most prominent first.", maxObjects)
	im, obj, _, r, err := e.runOne(ctx, imageID, prompt, o.NoCache)
	if err != nil {
		return nil, err
	}
	out := &DetectionResult{Success: true, ImageID: imageID, Objects: []DetectedObject{}, Meta: metaOf(r)}
	for _, it := range objs(obj["objects"]) {
		conf := 0.5
		if v, ok := number(it["confidence"]); ok {
			conf = clampConfidence(v)
		}
		if conf < threshold {
			continue
		}
		cat := normalizeCategory(str(it["category"]))
		if cats != nil && !cats[cat] {
			continue
		}
		count := 1
		if v, ok := number(it["count"]); ok && v >= 1 && v < 1e6 {
			count = int(v)
		}
		box, src := BoxFromHints(it, im.Width, im.Height)
		out.Objects = append(out.Objects, DetectedObject{
			Label: str(it["label"]), Category: cat, Confidence: conf, BoundingBox: box,
			Count: count, Location: str(it["location"]), BoxSource: src,
		})
	}
	// Most confident first, then cut to maxObjects.
	sortObjects(out.Objects)
	if len(out.Objects) > maxObjects {
		out.Objects = out.Objects[:maxObjects]
	}
	for i := range out.Objects {
		out.Objects[i].ID = fmt.Sprintf("obj_%d", i+1)
	}
	out.TotalDetected = len(out.Objects)
	return out, nil
}

func sortObjects(o []DetectedObject) {
	for i := 1; i < len(o); i++ {
		for j := i; j > 0 && o[j].Confidence > o[j-1].Confidence; j-- {
			o[j], o[j-1] = o[j-1], o[j]
		}
	}
}

func normalizeCategory(c string) string {
	c = strings.ToLower(strings.TrimSpace(c))
	for _, k := range ObjectCategories {
		if c == k || c == k+"s" {
			return k
		}
	}
	switch c {
	case "people", "human", "persons":
		return "person"
	case "plant", "plants", "tree", "trees", "landscape":
		return "nature"
	case "electronic", "device", "devices":
		return "electronics"
	}
	return "other"
}

// FaceOptions are analyzeFaces' options (nil means the default).
type FaceOptions struct {
	Options
	IncludeEmotions   *bool
	IncludeAttributes *bool
	IncludeLandmarks  bool
}

// FaceInfo is the specification's Face record.
type FaceInfo struct {
	ID          string           `json:"id"`
	AgeRange    string           `json:"ageRange"`
	Gender      string           `json:"gender"`
	Emotions    []string         `json:"emotions"`
	Orientation string           `json:"orientation"`
	Features    []string         `json:"features"`
	BoundingBox BoundingBox      `json:"boundingBox"`
	Landmarks   map[string]Point `json:"landmarks,omitempty"`
}

// FaceResult is analyzeFaces' result.
type FaceResult struct {
	Success    bool       `json:"success"`
	ImageID    string     `json:"imageId"`
	FaceCount  int        `json:"faceCount"`
	Faces      []FaceInfo `json:"faces"`
	Confidence float64    `json:"confidence"`
	Meta
}

func boolOr(p *bool, def bool) bool {
	if p == nil {
		return def
	}
	return *p
}

// AnalyzeFaces describes visible faces objectively (no identification).
// Landmarks, when asked for, are placed inside each face box by facial
// proportions.
func (e *Engine) AnalyzeFaces(ctx context.Context, imageID string, o FaceOptions) (*FaceResult, error) {
	emotions, attrs := boolOr(o.IncludeEmotions, true), boolOr(o.IncludeAttributes, true)
	prompt := prompts[Face]
	if !emotions {
		prompt += "\nDo not report emotions (use an empty list)."
	}
	if !attrs {
		prompt += "\nDo not report age, gender or features (use empty values)."
	}
	im, obj, parsed, r, err := e.runOne(ctx, imageID, prompt, o.NoCache)
	if err != nil {
		return nil, err
	}
	out := &FaceResult{Success: true, ImageID: imageID, Faces: []FaceInfo{}, Confidence: confidenceOf(obj, parsed), Meta: metaOf(r)}
	for i, it := range objs(obj["faces"]) {
		box, _ := BoxFromHints(it, im.Width, im.Height)
		f := FaceInfo{
			ID: fmt.Sprintf("face_%d", i+1), Orientation: str(it["orientation"]), BoundingBox: box,
			Emotions: []string{}, Features: []string{},
		}
		if emotions {
			f.Emotions = strs(it["emotions"])
		}
		if attrs {
			f.AgeRange, f.Gender, f.Features = str(it["ageRange"]), str(it["gender"]), strs(it["features"])
		}
		if o.IncludeLandmarks {
			f.Landmarks = FaceLandmarks(box, f.Orientation)
		}
		out.Faces = append(out.Faces, f)
	}
	out.FaceCount = len(out.Faces)
	return out, nil
}

// SceneOptions are classifySceneAdvanced's options.
type SceneOptions struct {
	Options
	IncludeAttributes *bool
	IncludeActivities bool
}

// SceneClassification is the classification of classifySceneAdvanced.
type SceneClassification struct {
	PrimaryCategory     string   `json:"primaryCategory"`
	SecondaryCategories []string `json:"secondaryCategories"`
	Indoor              *bool    `json:"indoor" jsonschema:"oneof_type=boolean;null" description:"null when the model does not say."`
	TimeOfDay           string   `json:"timeOfDay"`
	Weather             string   `json:"weather"`
	Location            string   `json:"location"`
	Mood                string   `json:"mood"`
	Confidence          float64  `json:"confidence"`
	Attributes          []string `json:"attributes,omitempty"`
	Activities          []string `json:"activities,omitempty"`
}

// SceneResult is classifySceneAdvanced's result.
type SceneResult struct {
	Success        bool                `json:"success"`
	ImageID        string              `json:"imageId"`
	Classification SceneClassification `json:"classification"`
	Meta
}

// ClassifySceneAdvanced classifies the scene: indoor or outdoor, time of
// day, weather, mood, and optionally attributes and activities.
func (e *Engine) ClassifySceneAdvanced(ctx context.Context, imageID string, o SceneOptions) (*SceneResult, error) {
	attrs := boolOr(o.IncludeAttributes, true)
	prompt := prompts[Scene]
	if attrs {
		prompt += "\nAlso give \"attributes\": [string] (notable visual attributes such as lighting, crowdedness, style)."
	}
	if o.IncludeActivities {
		prompt += "\nAlso give \"activities\": [string] (what is happening in the scene)."
	}
	_, obj, parsed, r, err := e.runOne(ctx, imageID, prompt, o.NoCache)
	if err != nil {
		return nil, err
	}
	c := SceneClassification{
		PrimaryCategory: str(obj["primaryCategory"]), SecondaryCategories: strs(obj["secondaryCategories"]),
		TimeOfDay: str(obj["timeOfDay"]), Weather: str(obj["weather"]), Location: str(obj["location"]),
		Mood: str(obj["mood"]), Confidence: confidenceOf(obj, parsed),
	}
	if !parsed {
		c.PrimaryCategory = "unknown"
	}
	if b, ok := obj["indoor"].(bool); ok {
		c.Indoor = &b
	}
	if attrs {
		c.Attributes = strs(obj["attributes"])
	}
	if o.IncludeActivities {
		c.Activities = strs(obj["activities"])
	}
	return &SceneResult{Success: true, ImageID: imageID, Classification: c, Meta: metaOf(r)}, nil
}

// TextBlock is one block of extractTextFromImage.
type TextBlock struct {
	Text        string      `json:"text"`
	Location    string      `json:"location"`
	Style       string      `json:"style"`
	Confidence  float64     `json:"confidence"`
	BoundingBox BoundingBox `json:"boundingBox"`
}

// TextResult is extractTextFromImage's result.
type TextResult struct {
	Success    bool        `json:"success"`
	ImageID    string      `json:"imageId"`
	Text       string      `json:"text"`
	Blocks     []TextBlock `json:"blocks"`
	Language   string      `json:"language"`
	Confidence float64     `json:"confidence"`
	Meta
}

// ExtractTextFromImage reads the text of an image with location hints.
// When the model answers in free text, that text is the result.
func (e *Engine) ExtractTextFromImage(ctx context.Context, imageID string, o Options) (*TextResult, error) {
	im, obj, parsed, r, err := e.runOne(ctx, imageID, prompts[OCR], o.NoCache)
	if err != nil {
		return nil, err
	}
	out := &TextResult{Success: true, ImageID: imageID, Text: str(obj["text"]), Blocks: []TextBlock{}, Language: str(obj["language"]), Confidence: confidenceOf(obj, parsed), Meta: metaOf(r)}
	var joined []string
	for _, it := range objs(obj["blocks"]) {
		box, _ := BoxFromHints(it, im.Width, im.Height)
		conf := out.Confidence
		if v, ok := number(it["confidence"]); ok {
			conf = clampConfidence(v)
		}
		b := TextBlock{Text: str(it["text"]), Location: str(it["location"]), Style: str(it["style"]), Confidence: conf, BoundingBox: box}
		if b.Text == "" {
			continue
		}
		joined = append(joined, b.Text)
		out.Blocks = append(out.Blocks, b)
	}
	if out.Text == "" && len(joined) > 0 {
		out.Text = strings.Join(joined, "\n")
	}
	return out, nil
}

// ChartResult is analyzeChartData's result.
type ChartResult struct {
	Success    bool           `json:"success"`
	ImageID    string         `json:"imageId"`
	ChartType  string         `json:"chartType"`
	Title      string         `json:"title"`
	Axes       map[string]any `json:"axes"`
	Data       []any          `json:"data"`
	Trends     []string       `json:"trends"`
	Confidence float64        `json:"confidence"`
	Meta
}

// AnalyzeChartData reads a chart's type, title, data points and trends.
func (e *Engine) AnalyzeChartData(ctx context.Context, imageID string, o Options) (*ChartResult, error) {
	_, obj, parsed, r, err := e.runOne(ctx, imageID, prompts[Chart], o.NoCache)
	if err != nil {
		return nil, err
	}
	out := &ChartResult{Success: true, ImageID: imageID, ChartType: str(obj["chartType"]), Title: str(obj["title"]), Axes: map[string]any{}, Data: []any{}, Trends: strs(obj["trends"]), Confidence: confidenceOf(obj, parsed), Meta: metaOf(r)}
	if out.ChartType == "" {
		out.ChartType = "unknown"
	}
	if a, ok := obj["axes"].(map[string]any); ok {
		out.Axes = a
	}
	if d, ok := obj["data"].([]any); ok {
		out.Data = d
	}
	return out, nil
}

// ColorAnalysis is the analysis of analyzeImageColors.
type ColorAnalysis struct {
	Dominant    []any             `json:"dominant"`
	Palette     []string          `json:"palette"`
	Temperature string            `json:"temperature"`
	Contrast    string            `json:"contrast"`
	Harmony     string            `json:"harmony"`
	Measured    ColorMeasurements `json:"measured"`
}

// ColorResult is analyzeImageColors' result.
type ColorResult struct {
	Success  bool          `json:"success"`
	ImageID  string        `json:"imageId"`
	Analysis ColorAnalysis `json:"analysis"`
	Meta
}

// AnalyzeImageColors combines the model's reading of the colours with
// colours, brightness and contrast measured from the pixels.
func (e *Engine) AnalyzeImageColors(ctx context.Context, imageID string, o Options) (*ColorResult, error) {
	im, obj, _, r, err := e.runOne(ctx, imageID, prompts[Color], o.NoCache)
	if err != nil {
		return nil, err
	}
	a := ColorAnalysis{
		Dominant: []any{}, Palette: strs(obj["palette"]), Temperature: str(obj["temperature"]),
		Contrast: str(obj["contrast"]), Harmony: str(obj["harmony"]), Measured: MeasureColors(im.thumb, 5),
	}
	if d, ok := obj["dominant"].([]any); ok {
		a.Dominant = d
	}
	return &ColorResult{Success: true, ImageID: imageID, Analysis: a, Meta: metaOf(r)}, nil
}

// CompareOptions are compareImages' options.
type CompareOptions struct {
	Options
	Detailed bool
}

// Comparison is compareImages' result.
type Comparison struct {
	Success      bool     `json:"success"`
	ImageID1     string   `json:"imageId1"`
	ImageID2     string   `json:"imageId2"`
	Similarities []string `json:"similarities"`
	Differences  []string `json:"differences"`
	Description  string   `json:"description"`
	Meta
}

const comparePrompt = `The first image is image 1 and the second is image 2. Compare them: what they share and how they differ.
JSON shape: {"similarities": [string], "differences": [string], "description": string (one paragraph), "similarityScore": number 0-1}`

// CompareImages compares two loaded images.
func (e *Engine) CompareImages(ctx context.Context, imageID1, imageID2 string, o CompareOptions) (*Comparison, error) {
	imgs, err := e.lookup([]string{"imageId1", "imageId2"}, imageID1, imageID2)
	if err != nil {
		return nil, err
	}
	prompt := comparePrompt
	if o.Detailed {
		prompt += "\nBe detailed: cover subjects, composition, colours, text, and small changes."
	} else {
		prompt += "\nBe brief: the main points only."
	}
	r, err := e.ask(ctx, imgs, prompt, !o.NoCache)
	if err != nil {
		return nil, err
	}
	obj, parsed := ParseReply(r.text)
	out := &Comparison{Success: true, ImageID1: imageID1, ImageID2: imageID2, Similarities: strs(obj["similarities"]), Differences: strs(obj["differences"]), Description: str(obj["description"]), Meta: metaOf(r)}
	if !parsed {
		out.Description = str(obj["text"])
	}
	return out, nil
}

// DifferenceHighlight is one region where two images differ.
type DifferenceHighlight struct {
	Description string      `json:"description"`
	Location    string      `json:"location"`
	Severity    string      `json:"severity"`
	BoundingBox BoundingBox `json:"boundingBox"`
}

// AdvancedComparison is compareImagesAdvanced's result: the model's score
// and highlighted differences, and a pixel similarity measured locally.
type AdvancedComparison struct {
	Success         bool                  `json:"success"`
	ImageID1        string                `json:"imageId1"`
	ImageID2        string                `json:"imageId2"`
	SimilarityScore float64               `json:"similarityScore"`
	PixelSimilarity float64               `json:"pixelSimilarity"`
	Similarities    []string              `json:"similarities"`
	Differences     []DifferenceHighlight `json:"differences"`
	Summary         string                `json:"summary"`
	Meta
}

const compareAdvancedPrompt = `The first image is image 1 and the second is image 2. Compare them in detail and score their similarity.
JSON shape: {"similarityScore": number 0-1 (1 = identical), "similarities": [string], "differences": [{"description": string, "location": location hint in image 2, "box": [x, y, width, height], "severity": "minor"|"moderate"|"major"}], "summary": string}`

// CompareImagesAdvanced scores two images' similarity and highlights where
// they differ, with normalised boxes from the model's location hints.
func (e *Engine) CompareImagesAdvanced(ctx context.Context, imageID1, imageID2 string, o Options) (*AdvancedComparison, error) {
	imgs, err := e.lookup([]string{"imageId1", "imageId2"}, imageID1, imageID2)
	if err != nil {
		return nil, err
	}
	r, err := e.ask(ctx, imgs, compareAdvancedPrompt, !o.NoCache)
	if err != nil {
		return nil, err
	}
	obj, parsed := ParseReply(r.text)
	out := &AdvancedComparison{
		Success: true, ImageID1: imageID1, ImageID2: imageID2,
		PixelSimilarity: PixelSimilarity(imgs[0].thumb, imgs[1].thumb),
		Similarities:    strs(obj["similarities"]), Differences: []DifferenceHighlight{},
		Summary: str(obj["summary"]), Meta: metaOf(r),
	}
	if v, ok := number(obj["similarityScore"]); ok {
		out.SimilarityScore = clampConfidence(v)
	} else {
		// No score from the model: the pixel measure is the best we have.
		out.SimilarityScore = out.PixelSimilarity
	}
	if !parsed {
		out.Summary = str(obj["text"])
	}
	for _, it := range objs(obj["differences"]) {
		box, _ := BoxFromHints(it, imgs[1].Width, imgs[1].Height)
		out.Differences = append(out.Differences, DifferenceHighlight{Description: str(it["description"]), Location: str(it["location"]), Severity: str(it["severity"]), BoundingBox: box})
	}
	return out, nil
}
