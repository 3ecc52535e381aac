package imaging

import (
	"context"
	"image/color"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairn-mcp/cairn/plugins/vision/visiontest"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

const testKey = "sk-test-0123456789"

// engine returns an engine pointed at a fake API with explicit settings.
func engine(t *testing.T) (*Engine, *visiontest.API) {
	t.Helper()
	api := visiontest.New(t, testKey)
	e := New(Config{APIKey: testKey, BaseURL: api.URL, Model: "test-model", MaxRetries: 2, RequestTimeout: 10 * time.Second, Root: t.TempDir()})
	return e, api
}

func load(t *testing.T, e *Engine, c color.Color, w, h int) *Image {
	t.Helper()
	im, _, err := e.AddImage(pngBytes(t, solid(w, h, c)), "")
	if err != nil {
		t.Fatal(err)
	}
	return im
}

func TestAnalyzeSendsKeyImageAndCaches(t *testing.T) {
	// The environment must not leak into an explicitly configured client.
	t.Setenv("ANTHROPIC_API_KEY", "sk-from-env")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	e, api := engine(t)
	im := load(t, e, color.RGBA{200, 10, 10, 255}, 20, 10)
	api.Push(visiontest.TextReply("```json\n{\"description\": \"a red rectangle\", \"composition\": \"flat\", \"confidence\": 0.9}\n```"))
	r, err := e.AnalyzeImage(context.Background(), im.ID, General, AnalyzeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Cached || r.Result["description"] != "a red rectangle" || r.Confidence != 0.9 || r.TokensUsed != 120 || r.AnalysisType != General {
		t.Fatalf("result %+v", r)
	}
	reqs := api.MessageRequests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	req := reqs[0]
	if req.Header.Get("X-Api-Key") != testKey {
		t.Fatalf("x-api-key = %q", req.Header.Get("X-Api-Key"))
	}
	if req.Body["model"] != "test-model" {
		t.Fatalf("model = %v", req.Body["model"])
	}
	content := req.Body["messages"].([]any)[0].(map[string]any)["content"].([]any)
	img := content[0].(map[string]any)
	src := img["source"].(map[string]any)
	if img["type"] != "image" || src["type"] != "base64" || src["media_type"] != "image/png" || src["data"] == "" {
		t.Fatalf("image block %v", img)
	}
	if txt := content[1].(map[string]any)["text"].(string); !strings.Contains(txt, "composition") {
		t.Fatalf("general prompt lacks its focus: %s", txt)
	}
	// Same analysis again: from the cache, no request.
	r2, err := e.AnalyzeImage(context.Background(), im.ID, General, AnalyzeOptions{})
	if err != nil || !r2.Cached || r2.Result["description"] != "a red rectangle" || len(api.MessageRequests()) != 1 {
		t.Fatalf("second call: %+v %v (%d requests)", r2, err, len(api.MessageRequests()))
	}
	// useCache=false asks again.
	api.Push(visiontest.TextReply("not json at all"))
	r3, err := e.AnalyzeImage(context.Background(), im.ID, General, AnalyzeOptions{NoCache: true})
	if err != nil || r3.Cached || r3.Result["parsed"] != false || r3.Result["text"] != "not json at all" || r3.Confidence != 0.4 {
		t.Fatalf("third call: %+v %v", r3, err)
	}
}

func TestAnalyzePromptFocus(t *testing.T) {
	e, api := engine(t)
	im := load(t, e, color.White, 8, 8)
	want := map[AnalysisType]string{
		General: "composition", OCR: "location hint", Chart: "chartType", Objects: "counts and locations",
		Face: "Never identify", Scene: "time of day", Color: "harmony", QA: "What colour is it?",
	}
	for _, at := range AnalysisTypes {
		api.Push(visiontest.JSONReply(map[string]any{"ok": true}))
		if _, err := e.AnalyzeImage(context.Background(), im.ID, at, AnalyzeOptions{Question: "What colour is it?"}); err != nil {
			t.Fatalf("%s: %v", at, err)
		}
		reqs := api.MessageRequests()
		content := reqs[len(reqs)-1].Body["messages"].([]any)[0].(map[string]any)["content"].([]any)
		if txt := content[1].(map[string]any)["text"].(string); !strings.Contains(txt, want[at]) {
			t.Errorf("%s prompt lacks %q: %s", at, want[at], txt)
		}
	}
}

func TestAnalyzeValidation(t *testing.T) {
	e, _ := engine(t)
	im := load(t, e, color.White, 8, 8)
	cases := []struct {
		name  string
		id    string
		at    AnalysisType
		q     string
		code  string
		field string
	}{
		{"unknown type", im.ID, "poetry", "", errs.InvalidInput, "analysisType"},
		{"qa without question", im.ID, QA, " ", errs.InvalidInput, "question"},
		{"qa question too long", im.ID, QA, strings.Repeat("x", MaxQuestionLength+1), errs.InvalidInput, "question"},
		{"unknown image", "img_nope", General, "", errs.NotFound, "imageId"},
	}
	for _, c := range cases {
		_, err := e.AnalyzeImage(context.Background(), c.id, c.at, AnalyzeOptions{Question: c.q})
		if code(err) != c.code || errs.From(err).Details["field"] != c.field {
			t.Errorf("%s: got %v", c.name, err)
		}
	}
	noKey := New(Config{Root: t.TempDir()})
	im2, _, _ := noKey.AddImage(pngBytes(t, solid(2, 2, color.White)), "x")
	_, err := noKey.AnalyzeImage(context.Background(), im2.ID, General, AnalyzeOptions{})
	if e := errs.From(err); e.Code != errs.NotConfigured || !strings.Contains(e.Message, "ANTHROPIC_API_KEY") {
		t.Fatalf("without a key: %v", err)
	}
}

func TestUpstreamErrorsAndRetries(t *testing.T) {
	e, api := engine(t)
	im := load(t, e, color.White, 8, 8)
	// Two overloads then success: the client retries twice.
	api.Push(visiontest.Retryable(529), visiontest.Retryable(500), visiontest.JSONReply(map[string]any{"description": "ok"}))
	r, err := e.AnalyzeImage(context.Background(), im.ID, General, AnalyzeOptions{})
	if err != nil || r.Result["description"] != "ok" || len(api.MessageRequests()) != 3 {
		t.Fatalf("retry: %v %+v (%d requests)", err, r, len(api.MessageRequests()))
	}
	// Three overloads exhaust MaxRetries=2.
	api.Push(visiontest.Retryable(529), visiontest.Retryable(529), visiontest.Retryable(529))
	_, err = e.AnalyzeImage(context.Background(), im.ID, OCR, AnalyzeOptions{})
	if ee := errs.From(err); ee.Code != errs.UpstreamFailed || ee.Status != 502 {
		t.Fatalf("exhausted retries: %v", err)
	}
	// A 400 is not retried.
	before := len(api.MessageRequests())
	api.Push(visiontest.ErrorReply(400, "invalid_request_error", "image too small"))
	_, err = e.AnalyzeImage(context.Background(), im.ID, Chart, AnalyzeOptions{})
	if ee := errs.From(err); ee.Code != errs.UpstreamFailed || !strings.Contains(ee.Message, "image too small") || len(api.MessageRequests()) != before+1 {
		t.Fatalf("400: %v", err)
	}
	// A wrong key: 401, named variable, key not echoed.
	bad := New(Config{APIKey: "sk-wrong-secret", BaseURL: api.URL, MaxRetries: 0})
	im3, _, _ := bad.AddImage(pngBytes(t, solid(2, 2, color.White)), "")
	_, err = bad.AnalyzeImage(context.Background(), im3.ID, General, AnalyzeOptions{})
	if ee := errs.From(err); ee.Code != errs.UpstreamFailed || !strings.Contains(ee.Message, "ANTHROPIC_API_KEY") || strings.Contains(ee.Error(), "sk-wrong-secret") {
		t.Fatalf("401: %v", err)
	}
	// 429 after retries is reported as rate limiting.
	api.Push(visiontest.ErrorReply(429, "rate_limit_error", "slow down"))
	rl := New(Config{APIKey: testKey, BaseURL: api.URL, MaxRetries: 0})
	im4, _, _ := rl.AddImage(pngBytes(t, solid(2, 2, color.White)), "")
	if _, err := rl.AnalyzeImage(context.Background(), im4.ID, General, AnalyzeOptions{}); code(err) != errs.RateLimited {
		t.Fatalf("429: %v", err)
	}
}

func TestBatchBoundedConcurrencyAndProgress(t *testing.T) {
	e, api := engine(t)
	var ids []string
	for i := 0; i < 5; i++ {
		ids = append(ids, load(t, e, color.RGBA{uint8(40 * i), 0, 0, 255}, 8, 8).ID)
	}
	ids = append(ids, "img_missing")
	// The first three calls wait for each other: the batch must run three
	// at a time, and never more.
	var mu sync.Mutex
	inflight, peak, arrived := 0, 0, 0
	gate := make(chan struct{})
	api.Fallback = func(visiontest.Request) visiontest.Reply {
		mu.Lock()
		inflight++
		arrived++
		peak = max(peak, inflight)
		if arrived == 3 {
			close(gate)
		}
		mu.Unlock()
		select {
		case <-gate:
		case <-time.After(20 * time.Second):
		}
		mu.Lock()
		inflight--
		mu.Unlock()
		return visiontest.JSONReply(map[string]any{"description": "x"})
	}
	var pmu sync.Mutex
	var seen []int
	res, err := e.BatchAnalyzeImages(context.Background(), ids, General, BatchOptions{Progress: func(done, total int, _ string, _ error) {
		pmu.Lock()
		seen = append(seen, done)
		pmu.Unlock()
		if total != 6 {
			t.Errorf("total %d", total)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if peak != 3 {
		t.Fatalf("peak concurrency %d, want 3", peak)
	}
	if res.Success || res.Completed != 5 || res.Failed != 1 || res.Errors[0].ImageID != "img_missing" || res.Errors[0].Code != errs.NotFound {
		t.Fatalf("batch %+v", res)
	}
	for i, r := range res.Results {
		if r.ImageID != ids[i] {
			t.Fatalf("results out of order: %d is %s", i, r.ImageID)
		}
	}
	if len(seen) != 6 {
		t.Fatalf("progress calls %v", seen)
	}
	for _, c := range []BatchOptions{{Concurrency: 4}, {Concurrency: -1}} {
		if _, err := e.BatchAnalyzeImages(context.Background(), ids, General, c); code(err) != errs.InvalidInput {
			t.Fatalf("concurrency %d: %v", c.Concurrency, err)
		}
	}
	if _, err := e.BatchAnalyzeImages(context.Background(), nil, General, BatchOptions{}); code(err) != errs.InvalidInput {
		t.Fatalf("empty batch: %v", err)
	}
	if _, err := e.BatchAnalyzeImages(context.Background(), make([]string, MaxBatchImages+1), General, BatchOptions{}); code(err) != errs.InvalidInput {
		t.Fatalf("big batch: %v", err)
	}
}

func TestDetectObjectsBoxes(t *testing.T) {
	e, api := engine(t)
	im := load(t, e, color.White, 200, 100)
	api.Push(visiontest.JSONReply(map[string]any{"objects": []any{
		map[string]any{"label": "cat", "category": "animal", "count": 2, "confidence": 0.95, "box": []any{0.1, 0.2, 0.3, 0.4}},
		map[string]any{"label": "car", "category": "vehicles", "confidence": 0.8, "box": []any{100, 50, 100, 100}},
		map[string]any{"label": "lamp", "category": "furniture", "confidence": 0.7, "location": "top-right"},
		map[string]any{"label": "sky", "category": "nature", "confidence": "60%"},
		map[string]any{"label": "blur", "category": "other", "confidence": 0.2, "location": "center"},
	}}))
	thr := 0.5
	r, err := e.DetectObjectsWithBoundingBoxes(context.Background(), im.ID, DetectOptions{ConfidenceThreshold: &thr})
	if err != nil {
		t.Fatal(err)
	}
	want := []DetectedObject{
		{ID: "obj_1", Label: "cat", Category: "animal", Confidence: 0.95, Count: 2, BoundingBox: BoundingBox{0.1, 0.2, 0.3, 0.4}, BoxSource: "box"},
		{ID: "obj_2", Label: "car", Category: "vehicle", Confidence: 0.8, Count: 1, BoundingBox: BoundingBox{0.5, 0.5, 0.5, 0.5}, BoxSource: "box"},
		{ID: "obj_3", Label: "lamp", Category: "furniture", Confidence: 0.7, Count: 1, Location: "top-right", BoundingBox: BoundingBox{0.6667, 0, 0.3333, 0.3333}, BoxSource: "location"},
		{ID: "obj_4", Label: "sky", Category: "nature", Confidence: 0.6, Count: 1, BoundingBox: FullImage, BoxSource: "none"},
	}
	if r.TotalDetected != len(want) {
		t.Fatalf("objects %+v", r.Objects)
	}
	for i := range want {
		if r.Objects[i] != want[i] {
			t.Errorf("object %d = %+v, want %+v", i, r.Objects[i], want[i])
		}
	}
	// Filters: categories and maxObjects, and the prompt says so.
	api.Push(visiontest.JSONReply(map[string]any{"objects": []any{
		map[string]any{"label": "a", "category": "animal", "confidence": 0.9},
		map[string]any{"label": "b", "category": "animal", "confidence": 0.8},
		map[string]any{"label": "c", "category": "food", "confidence": 0.99},
	}}))
	r, err = e.DetectObjectsWithBoundingBoxes(context.Background(), im.ID, DetectOptions{Categories: []string{"animal"}, MaxObjects: 1})
	if err != nil || r.TotalDetected != 1 || r.Objects[0].Label != "a" {
		t.Fatalf("filtered: %+v %v", r, err)
	}
	reqs := api.MessageRequests()
	txt := reqs[len(reqs)-1].Body["messages"].([]any)[0].(map[string]any)["content"].([]any)[1].(map[string]any)["text"].(string)
	if !strings.Contains(txt, "categories: animal") || !strings.Contains(txt, "at most 1 objects") {
		t.Fatalf("prompt: %s", txt)
	}
}

func TestDetectOptionRules(t *testing.T) {
	neg, big := -0.1, 1.5
	cases := []struct {
		name  string
		o     DetectOptions
		field string
	}{
		{"threshold below 0", DetectOptions{ConfidenceThreshold: &neg}, "confidenceThreshold"},
		{"threshold above 1", DetectOptions{ConfidenceThreshold: &big}, "confidenceThreshold"},
		{"maxObjects negative", DetectOptions{MaxObjects: -1}, "maxObjects"},
		{"maxObjects above ceiling", DetectOptions{MaxObjects: MaxMaxObjects + 1}, "maxObjects"},
		{"unknown category", DetectOptions{Categories: []string{"animal", "spaceship"}}, "categories[1]"},
	}
	for _, c := range cases {
		_, _, _, err := ValidateDetectOptions(c.o)
		if code(err) != errs.InvalidInput || errs.From(err).Details["field"] != c.field {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	thr, n, cats, err := ValidateDetectOptions(DetectOptions{})
	if err != nil || thr != 0.5 || n != 50 || cats != nil {
		t.Fatalf("defaults: %v %v %v %v", thr, n, cats, err)
	}
}

func TestBoxFromLocation(t *testing.T) {
	third := 0.3333
	cases := []struct {
		hint string
		want BoundingBox
		ok   bool
	}{
		{"top-left", BoundingBox{0, 0, third, third}, true},
		{"Top Right corner", BoundingBox{0.6667, 0, third, third}, true},
		{"bottom", BoundingBox{0, 0.6667, 1, third}, true},
		{"left side", BoundingBox{0, 0, third, 1}, true},
		{"center", BoundingBox{third, third, third, third}, true},
		{"center left", BoundingBox{0, third, third, third}, true},
		{"top center", BoundingBox{third, 0, third, third}, true},
		{"lower right", BoundingBox{0.6667, 0.6667, third, third}, true},
		{"entire image", FullImage, true},
		{"", BoundingBox{}, false},
		{"somewhere", BoundingBox{}, false},
	}
	for _, c := range cases {
		got, ok := BoxFromLocation(c.hint)
		if ok != c.ok || got != c.want {
			t.Errorf("%q: %+v %v; want %+v %v", c.hint, got, ok, c.want, c.ok)
		}
	}
	for _, c := range []struct {
		box  any
		ok   bool
		want BoundingBox
	}{
		{[]any{0.5, 0.5, 0.9, 0.9}, true, BoundingBox{0.5, 0.5, 0.5, 0.5}},
		{map[string]any{"x": 10.0, "y": 10.0, "width": 50.0, "height": 40.0}, true, BoundingBox{0.1, 0.2, 0.5, 0.8}},
		{[]any{0.1, 0.1, 0, 0.5}, false, BoundingBox{}},
		{[]any{1, 2, 3}, false, BoundingBox{}},
		{"0,0,1,1", false, BoundingBox{}},
	} {
		got, ok := boxValue(c.box, 100, 50)
		if ok != c.ok || got != c.want {
			t.Errorf("box %v: %+v %v", c.box, got, ok)
		}
	}
}

func TestSpecialisedAnalyses(t *testing.T) {
	e, api := engine(t)
	red := load(t, e, color.RGBA{255, 0, 0, 255}, 64, 64)
	black := load(t, e, color.Black, 64, 64)
	white := load(t, e, color.White, 64, 64)
	ctx := context.Background()

	api.Push(visiontest.JSONReply(map[string]any{"faces": []any{map[string]any{"ageRange": "30-40", "gender": "female", "emotions": []any{"happy"}, "orientation": "frontal", "features": []any{"glasses"}, "box": []any{0.2, 0.2, 0.4, 0.5}}}, "confidence": 0.8}))
	f, err := e.AnalyzeFaces(ctx, red.ID, FaceOptions{IncludeLandmarks: true})
	if err != nil || f.FaceCount != 1 || f.Faces[0].AgeRange != "30-40" || f.Faces[0].Emotions[0] != "happy" || f.Faces[0].Landmarks["nose"] != (Point{0.4, 0.49}) {
		t.Fatalf("faces %+v %v", f, err)
	}
	no := false
	api.Push(visiontest.JSONReply(map[string]any{"faces": []any{map[string]any{"ageRange": "30-40", "emotions": []any{"sad"}}}}))
	f, err = e.AnalyzeFaces(ctx, red.ID, FaceOptions{IncludeEmotions: &no, IncludeAttributes: &no})
	if err != nil || f.Faces[0].AgeRange != "" || len(f.Faces[0].Emotions) != 0 || f.Faces[0].Landmarks != nil {
		t.Fatalf("faces without attributes %+v %v", f, err)
	}

	api.Push(visiontest.JSONReply(map[string]any{"primaryCategory": "beach", "secondaryCategories": []any{"sea"}, "indoor": false, "timeOfDay": "afternoon", "weather": "sunny", "mood": "calm", "activities": []any{"swimming"}, "confidence": 0.7}))
	s, err := e.ClassifySceneAdvanced(ctx, red.ID, SceneOptions{IncludeActivities: true})
	if err != nil || s.Classification.PrimaryCategory != "beach" || s.Classification.Indoor == nil || *s.Classification.Indoor || s.Classification.Activities[0] != "swimming" {
		t.Fatalf("scene %+v %v", s, err)
	}

	api.Push(visiontest.JSONReply(map[string]any{"blocks": []any{map[string]any{"text": "Hello", "location": "top", "style": "heading", "confidence": 0.9}, map[string]any{"text": "World", "location": "bottom-left"}}, "language": "en"}))
	o, err := e.ExtractTextFromImage(ctx, red.ID, Options{})
	if err != nil || o.Text != "Hello\nWorld" || len(o.Blocks) != 2 || o.Blocks[1].BoundingBox != (BoundingBox{0, 0.6667, 0.3333, 0.3333}) {
		t.Fatalf("ocr %+v %v", o, err)
	}

	api.Push(visiontest.JSONReply(map[string]any{"chartType": "bar", "title": "Sales", "data": []any{map[string]any{"label": "Q1", "value": 3.0}}, "trends": []any{"rising"}}))
	c, err := e.AnalyzeChartData(ctx, red.ID, Options{})
	if err != nil || c.ChartType != "bar" || len(c.Data) != 1 || c.Trends[0] != "rising" {
		t.Fatalf("chart %+v %v", c, err)
	}

	api.Push(visiontest.JSONReply(map[string]any{"palette": []any{"#ff0000"}, "temperature": "warm", "contrast": "low", "harmony": "monochromatic"}))
	col, err := e.AnalyzeImageColors(ctx, red.ID, Options{})
	if err != nil || col.Analysis.Temperature != "warm" || col.Analysis.Measured.Dominant[0] != (MeasuredColor{"#ff0000", 100}) || col.Analysis.Measured.Contrast != 0 {
		t.Fatalf("colors %+v %v", col, err)
	}

	api.Push(visiontest.JSONReply(map[string]any{"similarities": []any{"same size"}, "differences": []any{"colour"}, "description": "two squares"}))
	cmp, err := e.CompareImages(ctx, black.ID, white.ID, CompareOptions{Detailed: true})
	if err != nil || cmp.Description != "two squares" || cmp.Differences[0] != "colour" {
		t.Fatalf("compare %+v %v", cmp, err)
	}
	reqs := api.MessageRequests()
	if n := len(reqs[len(reqs)-1].Body["messages"].([]any)[0].(map[string]any)["content"].([]any)); n != 3 {
		t.Fatalf("compare sent %d blocks, want two images and the prompt", n)
	}

	api.Push(visiontest.JSONReply(map[string]any{"summary": "opposites", "differences": []any{map[string]any{"description": "all pixels", "location": "entire", "severity": "major"}}}))
	adv, err := e.CompareImagesAdvanced(ctx, black.ID, white.ID, Options{})
	if err != nil || adv.PixelSimilarity != 0 || adv.SimilarityScore != 0 || adv.Differences[0].BoundingBox != FullImage {
		t.Fatalf("advanced %+v %v", adv, err)
	}
	api.Push(visiontest.JSONReply(map[string]any{"similarityScore": 0.97, "summary": "same"}))
	adv, err = e.CompareImagesAdvanced(ctx, white.ID, white.ID, Options{})
	if err != nil || adv.PixelSimilarity != 1 || adv.SimilarityScore != 0.97 {
		t.Fatalf("advanced same %+v %v", adv, err)
	}
}

func TestParseReply(t *testing.T) {
	cases := []struct {
		in     string
		parsed bool
		key    string
	}{
		{`{"a": 1}`, true, "a"},
		{"Here you go:\n```json\n{\"a\": {\"b\": [1, 2]}}\n```\nDone.", true, "a"},
		{`I think {broken {"a": "x}"} trailing`, true, "a"},
		{"no json here", false, "text"},
		{`[1, 2, 3]`, false, "text"},
		{``, false, "text"},
	}
	for _, c := range cases {
		m, ok := ParseReply(c.in)
		if ok != c.parsed || m[c.key] == nil {
			t.Errorf("ParseReply(%q) = %v, %v", c.in, m, ok)
		}
	}
}

func TestConfigFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	c, err := ConfigFromEnv(env(map[string]string{EnvAPIKey: " k ", EnvBaseURL: "http://x", EnvModel: "m", EnvTimeout: "90s", EnvMaxRetries: "0"}), "/r")
	if err != nil || c.APIKey != "k" || c.BaseURL != "http://x" || c.Model != "m" || c.RequestTimeout != 90*time.Second || c.MaxRetries != 0 || c.Root != "/r" {
		t.Fatalf("%+v %v", c, err)
	}
	d, _ := ConfigFromEnv(env(nil), "/r")
	d = d.withDefaults()
	if d.Model != DefaultModel || d.MaxRetries != DefaultMaxRetries || d.RequestTimeout != DefaultRequestTimeout || d.Configured() {
		t.Fatalf("defaults %+v", d)
	}
	if strings.Contains(c.String(), "k ") || !strings.Contains(c.String(), "key_set=true") {
		t.Fatalf("String leaks or lacks state: %s", c.String())
	}
	for _, bad := range []map[string]string{{EnvTimeout: "soon"}, {EnvTimeout: "11m"}, {EnvMaxRetries: "9"}, {EnvMaxRetries: "-1"}} {
		if _, err := ConfigFromEnv(env(bad), "/r"); code(err) != errs.ConfigInvalid {
			t.Errorf("%v: %v", bad, err)
		}
	}
}

func TestImageStoreEvictsLeastRecentlyUsed(t *testing.T) {
	e := New(Config{Limits: Limits{MaxImages: 2}})
	a, _, _ := e.AddImage(pngBytes(t, solid(2, 2, color.White)), "a")
	b, _, _ := e.AddImage(pngBytes(t, solid(2, 2, color.Black)), "b")
	if again, dup, _ := e.AddImage(pngBytes(t, solid(2, 2, color.White)), "a2"); !dup || again.ID != a.ID {
		t.Fatal("same bytes should give the same image")
	}
	if _, err := e.GetImage(a.ID); err != nil {
		t.Fatal(err)
	}
	e.AddImage(pngBytes(t, solid(2, 2, color.RGBA{1, 2, 3, 255})), "c")
	if _, err := e.GetImage(b.ID); code(err) != errs.NotFound {
		t.Fatalf("b should have been evicted: %v", err)
	}
	if _, err := e.GetImage(a.ID); err != nil {
		t.Fatalf("a was used recently: %v", err)
	}
}
