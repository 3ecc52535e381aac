package imaging

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/cairn-mcp/cairn/sdk/errs"
)

// AnalysisType is one of the specification's analysis kinds.
type AnalysisType string

// Analysis types (specification part 4).
const (
	General AnalysisType = "general"
	OCR     AnalysisType = "ocr"
	Chart   AnalysisType = "chart"
	Objects AnalysisType = "objects"
	Face    AnalysisType = "face"
	Scene   AnalysisType = "scene"
	Color   AnalysisType = "color"
	QA      AnalysisType = "qa"
)

// AnalysisTypes lists every analysis type.
var AnalysisTypes = []AnalysisType{General, OCR, Chart, Objects, Face, Scene, Color, QA}

// MaxQuestionLength bounds a qa question.
const MaxQuestionLength = 2000

// prompts give each analysis type the focus of the specification and the
// JSON shape requested.
var prompts = map[AnalysisType]string{
	General: `Analyse this image. Focus: an overall description, the composition (layout, main subjects, framing, style) and any visible text.
JSON shape: {"description": string, "composition": string, "subjects": [string], "text": string or null, "confidence": number 0-1}`,
	OCR: `Extract all text visible in this image, in reading order, with a location hint for each block.
JSON shape: {"text": string (all text), "blocks": [{"text": string, "location": location hint, "box": [x, y, width, height], "style": "heading"|"body"|"caption"|"label"|"code"|"handwriting"|"other", "confidence": number 0-1}], "language": string, "confidence": number 0-1}`,
	Chart: `Read the chart in this image: its type, title, axes and the data it shows as JSON, and the trends.
JSON shape: {"chartType": "bar"|"line"|"pie"|"scatter"|"area"|"histogram"|"table"|"other", "title": string or null, "axes": {"x": string, "y": string}, "data": [{"label": string, "value": number, "series": string}], "trends": [string], "confidence": number 0-1}`,
	Objects: `List the objects in this image: names, counts and locations.
JSON shape: {"objects": [{"label": string, "category": "person"|"vehicle"|"animal"|"furniture"|"electronics"|"nature"|"food"|"building"|"clothing"|"other", "count": integer, "confidence": number 0-1, "location": location hint, "box": [x, y, width, height]}], "confidence": number 0-1}`,
	Face: `Describe the faces visible in this image objectively: apparent age range, apparent gender presentation, emotion and head orientation. Never identify who anyone is.
JSON shape: {"faces": [{"ageRange": string such as "20-30", "gender": "male"|"female"|"unknown", "emotions": [string], "orientation": "frontal"|"left profile"|"right profile"|"three-quarter left"|"three-quarter right"|"tilted"|"away", "features": [string], "location": location hint, "box": [x, y, width, height], "confidence": number 0-1}], "confidence": number 0-1}`,
	Scene: `Classify the scene in this image: indoor or outdoor, time of day, weather and mood.
JSON shape: {"primaryCategory": string, "secondaryCategories": [string], "indoor": boolean, "timeOfDay": "morning"|"afternoon"|"evening"|"night"|"unknown", "weather": string ("not applicable" indoors), "location": string, "mood": string, "confidence": number 0-1}`,
	Color: `Analyse the colours of this image: dominant colours, palette, colour temperature, contrast and harmony.
JSON shape: {"dominant": [{"name": string, "hex": "#rrggbb", "percentage": number}], "palette": ["#rrggbb"], "temperature": "warm"|"cool"|"neutral", "contrast": "low"|"medium"|"high", "harmony": "complementary"|"analogous"|"triadic"|"monochromatic"|"split-complementary"|"other", "confidence": number 0-1}`,
	QA: `Answer this question about the image: %s
JSON shape: {"answer": string, "explanation": string, "confidence": number 0-1}`,
}

// AnalysisResult is the specification's AnalysisResult record.
type AnalysisResult struct {
	ImageID          string         `json:"imageId"`
	AnalysisType     AnalysisType   `json:"analysisType"`
	Result           map[string]any `json:"result"`
	Confidence       float64        `json:"confidence"`
	Model            string         `json:"model"`
	TokensUsed       int            `json:"tokensUsed"`
	ProcessingTimeMs int64          `json:"processingTimeMs"`
	Cached           bool           `json:"cached"`
}

// AnalyzeOptions are analyzeImage's options.
type AnalyzeOptions struct {
	// UseCache answers from the analysis cache when the same analysis of
	// the same image was made before (default true; set NoCache to skip).
	NoCache bool
	// Question is required for qa and ignored otherwise.
	Question string
}

// ParseAnalysisType checks an analysis type name.
func ParseAnalysisType(s string) (AnalysisType, error) {
	for _, t := range AnalysisTypes {
		if string(t) == s {
			return t, nil
		}
	}
	return "", errs.Invalidf("analysisType", "enum", "analysisType %q is not one of general, ocr, chart, objects, face, scene, color, qa", s)
}

func promptFor(t AnalysisType, question string) (string, error) {
	if t != QA {
		return prompts[t], nil
	}
	q := strings.TrimSpace(question)
	if q == "" {
		return "", errs.Invalid("question", "required", "analysisType qa needs a question")
	}
	if utf8.RuneCountInString(q) > MaxQuestionLength {
		return "", errs.Invalidf("question", "maxLength", "the question is longer than %d characters", MaxQuestionLength)
	}
	return fmt.Sprintf(prompts[QA], q), nil
}

// AnalyzeImage asks the hosted model for one analysis of a loaded image.
func (e *Engine) AnalyzeImage(ctx context.Context, imageID string, t AnalysisType, opts AnalyzeOptions) (*AnalysisResult, error) {
	if _, err := ParseAnalysisType(string(t)); err != nil {
		return nil, err
	}
	prompt, err := promptFor(t, opts.Question)
	if err != nil {
		return nil, err
	}
	imgs, err := e.lookup([]string{"imageId"}, imageID)
	if err != nil {
		return nil, err
	}
	r, err := e.ask(ctx, imgs, prompt, !opts.NoCache)
	if err != nil {
		return nil, err
	}
	obj, parsed := ParseReply(r.text)
	return &AnalysisResult{
		ImageID: imageID, AnalysisType: t, Result: obj,
		Confidence: confidenceOf(obj, parsed), Model: r.model, TokensUsed: r.tokens,
		ProcessingTimeMs: r.elapsed.Milliseconds(), Cached: r.cached,
	}, nil
}

// ParseReply extracts the JSON object from a model reply. The model is asked
// for bare JSON but may wrap it in prose or code fences; when no object can
// be found the text is returned as {"text": ..., "parsed": false}.
func ParseReply(text string) (map[string]any, bool) {
	s := strings.TrimSpace(text)
	var obj map[string]any
	if json.Unmarshal([]byte(s), &obj) == nil && obj != nil {
		return obj, true
	}
	// Try every '{' as the start of an object, decoding just one value.
	for i := 0; i < len(s); i++ {
		if s[i] != '{' {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(s[i:]))
		var m map[string]any
		if dec.Decode(&m) == nil && m != nil {
			return m, true
		}
	}
	return map[string]any{"text": s, "parsed": false}, false
}

// confidenceOf takes the model's own confidence when it gave one (0-1, or a
// percentage); otherwise it falls back to 0.7 for a well-formed reply and
// 0.4 for free text, so callers can tell a structured answer from a guess.
func confidenceOf(obj map[string]any, parsed bool) float64 {
	if v, ok := number(obj["confidence"]); ok {
		return clampConfidence(v)
	}
	if parsed {
		return 0.7
	}
	return 0.4
}

func clampConfidence(v float64) float64 {
	if v > 1 && v <= 100 {
		v /= 100
	}
	if math.IsNaN(v) || v < 0 {
		return 0
	}
	if v > 1 {
		return 1
	}
	return math.Round(v*1000) / 1000
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, !math.IsNaN(n) && !math.IsInf(n, 0)
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case string:
		var f float64
		if _, err := fmt.Sscanf(strings.TrimSuffix(strings.TrimSpace(n), "%"), "%g", &f); err == nil {
			if strings.HasSuffix(strings.TrimSpace(n), "%") {
				f /= 100
			}
			return f, true
		}
	}
	return 0, false
}

func str(v any) string {
	switch s := v.(type) {
	case string:
		return strings.TrimSpace(s)
	case nil:
		return ""
	case float64, bool:
		return fmt.Sprint(s)
	}
	return ""
}

func strs(v any) []string {
	out := []string{}
	switch a := v.(type) {
	case []any:
		for _, x := range a {
			if s := str(x); s != "" {
				out = append(out, s)
			}
		}
	case string:
		if s := strings.TrimSpace(a); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func objs(v any) []map[string]any {
	var out []map[string]any
	if a, ok := v.([]any); ok {
		for _, x := range a {
			if m, ok := x.(map[string]any); ok {
				out = append(out, m)
			}
		}
	}
	return out
}

// Batch concurrency (specification part 8): default and ceiling 3.
const (
	DefaultBatchConcurrency = 3
	MaxBatchConcurrency     = 3
	MaxBatchImages          = 50
)

// BatchOptions are batchAnalyzeImages' options.
type BatchOptions struct {
	// Concurrency of model calls, 1 to 3 (0 means 3).
	Concurrency int
	NoCache     bool
	Question    string
	// Progress is called after each image with the number done so far;
	// calls never overlap.
	Progress func(done, total int, imageID string, err error)
}

// BatchError is one failed image of a batch.
type BatchError struct {
	ImageID string `json:"imageId"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// BatchResult is batchAnalyzeImages' result; results keep the input order.
type BatchResult struct {
	Success   bool              `json:"success"`
	Total     int               `json:"total"`
	Completed int               `json:"completed"`
	Failed    int               `json:"failed"`
	Results   []*AnalysisResult `json:"results"`
	Errors    []BatchError      `json:"errors"`
}

// BatchAnalyzeImages runs one analysis over several images with bounded
// concurrency. One image failing does not stop the others.
func (e *Engine) BatchAnalyzeImages(ctx context.Context, imageIDs []string, t AnalysisType, opts BatchOptions) (*BatchResult, error) {
	if len(imageIDs) == 0 {
		return nil, errs.Invalid("imageIds", "minItems", "imageIds needs at least one image id")
	}
	if len(imageIDs) > MaxBatchImages {
		return nil, errs.Invalidf("imageIds", "maxItems", "a batch holds at most %d images; split it", MaxBatchImages)
	}
	conc := opts.Concurrency
	if conc == 0 {
		conc = DefaultBatchConcurrency
	}
	if conc < 1 || conc > MaxBatchConcurrency {
		return nil, errs.Invalidf("concurrency", "maximum", "concurrency must be 1 to %d", MaxBatchConcurrency)
	}
	if _, err := ParseAnalysisType(string(t)); err != nil {
		return nil, err
	}
	if _, err := promptFor(t, opts.Question); err != nil {
		return nil, err
	}
	if !e.cfg.Configured() {
		return nil, NotConfiguredError()
	}
	results := make([]*AnalysisResult, len(imageIDs))
	failures := make([]error, len(imageIDs))
	sem := make(chan struct{}, conc)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for i, id := range imageIDs {
		wg.Add(1)
		go func(i int, id string) {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				failures[i] = errs.New(499, errs.Cancelled, "the batch was cancelled")
				return
			}
			res, err := e.AnalyzeImage(ctx, id, t, AnalyzeOptions{NoCache: opts.NoCache, Question: opts.Question})
			<-sem
			results[i], failures[i] = res, err
			// Progress calls are serialised, so done counts up by one and
			// the callback needs no locking of its own.
			mu.Lock()
			done++
			if opts.Progress != nil {
				opts.Progress(done, len(imageIDs), id, err)
			}
			mu.Unlock()
		}(i, id)
	}
	wg.Wait()
	out := &BatchResult{Total: len(imageIDs), Results: []*AnalysisResult{}, Errors: []BatchError{}}
	for i, r := range results {
		if failures[i] != nil {
			te := errs.From(failures[i])
			out.Errors = append(out.Errors, BatchError{ImageID: imageIDs[i], Code: te.Code, Message: te.Message})
			continue
		}
		out.Results = append(out.Results, r)
	}
	out.Completed, out.Failed = len(out.Results), len(out.Errors)
	out.Success = out.Failed == 0
	return out, nil
}
