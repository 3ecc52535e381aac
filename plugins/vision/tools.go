package vision

import (
	"context"
	"fmt"

	"github.com/cairn-mcp/cairn/plugins/vision/imaging"
	"github.com/cairn-mcp/cairn/sdk"
	"github.com/cairn-mcp/cairn/sdk/errs"
)

// LoadImageInput is vision_load_image's input.
type LoadImageInput struct {
	Path string `json:"path,omitempty" jsonschema:"maxLength=4096,description=Image file inside the workspace root (relative to it or absolute); give path or data"`
	Data string `json:"data,omitempty" jsonschema:"maxLength=28000000,description=Base64 image bytes or a data: URL; give path or data"`
	Name string `json:"name,omitempty" jsonschema:"maxLength=256,description=Display name (default: the path or the id)"`
}

// ImageOutput is a loaded image.
type ImageOutput struct {
	imaging.Image
	// AlreadyLoaded is true when the same bytes were loaded before; the
	// id and its analysis cache are reused.
	AlreadyLoaded bool `json:"alreadyLoaded"`
}

// ImageListOutput lists loaded images.
type ImageListOutput struct {
	Images []*imaging.Image `json:"images"`
	Count  int              `json:"count"`
}

// CacheOption is shared by the analysis inputs.
type CacheOption struct {
	UseCache *bool `json:"useCache,omitempty" jsonschema:"description=Answer from the analysis cache when the same analysis was made (default true)"`
}

func (c CacheOption) noCache() bool { return c.UseCache != nil && !*c.UseCache }

// AnalyzeInput is vision_analyze's input.
type AnalyzeInput struct {
	ImageID      string `json:"imageId" jsonschema:"minLength=1,maxLength=64,description=Id from vision_load_image"`
	AnalysisType string `json:"analysisType" jsonschema:"enum=general,enum=ocr,enum=chart,enum=objects,enum=face,enum=scene,enum=color,enum=qa,description=general: description/composition/text; ocr: text with locations; chart: data; objects; face (objective only); scene; color; qa: answer question"`
	Question     string `json:"question,omitempty" jsonschema:"maxLength=2000,description=Required for qa"`
	CacheOption
}

// BatchInput is vision_batch_analyze's input.
type BatchInput struct {
	ImageIDs     []string `json:"imageIds" jsonschema:"minItems=1,maxItems=50"`
	AnalysisType string   `json:"analysisType" jsonschema:"enum=general,enum=ocr,enum=chart,enum=objects,enum=face,enum=scene,enum=color,enum=qa"`
	Question     string   `json:"question,omitempty" jsonschema:"maxLength=2000,description=Required for qa"`
	Concurrency  int      `json:"concurrency,omitempty" jsonschema:"minimum=1,maximum=3,default=3,description=Model calls in flight"`
	CacheOption
}

// CompareInput is vision_compare's input.
type CompareInput struct {
	ImageID1 string `json:"imageId1" jsonschema:"minLength=1,maxLength=64"`
	ImageID2 string `json:"imageId2" jsonschema:"minLength=1,maxLength=64"`
	Detailed bool   `json:"detailed,omitempty" jsonschema:"description=A detailed comparison (default false)"`
	CacheOption
}

// CompareAdvancedInput is vision_compare_advanced's input.
type CompareAdvancedInput struct {
	ImageID1 string `json:"imageId1" jsonschema:"minLength=1,maxLength=64"`
	ImageID2 string `json:"imageId2" jsonschema:"minLength=1,maxLength=64"`
	CacheOption
}

// DetectInput is vision_detect_objects' input.
type DetectInput struct {
	ImageID             string   `json:"imageId" jsonschema:"minLength=1,maxLength=64"`
	ConfidenceThreshold *float64 `json:"confidenceThreshold,omitempty" jsonschema:"minimum=0,maximum=1,default=0.5"`
	MaxObjects          int      `json:"maxObjects,omitempty" jsonschema:"minimum=1,maximum=200,default=50"`
	Categories          []string `json:"categories,omitempty" jsonschema:"maxItems=9,description=Only these categories: person vehicle animal furniture electronics nature food building clothing"`
	CacheOption
}

// FaceInput is vision_analyze_faces' input.
type FaceInput struct {
	ImageID           string `json:"imageId" jsonschema:"minLength=1,maxLength=64"`
	IncludeEmotions   *bool  `json:"includeEmotions,omitempty" jsonschema:"description=Default true"`
	IncludeAttributes *bool  `json:"includeAttributes,omitempty" jsonschema:"description=Age range, gender presentation, features (default true)"`
	IncludeLandmarks  bool   `json:"includeLandmarks,omitempty" jsonschema:"description=Estimated eye/nose/mouth positions from each face box (default false)"`
	CacheOption
}

// SceneInput is vision_classify_scene's input.
type SceneInput struct {
	ImageID           string `json:"imageId" jsonschema:"minLength=1,maxLength=64"`
	IncludeAttributes *bool  `json:"includeAttributes,omitempty" jsonschema:"description=Default true"`
	IncludeActivities bool   `json:"includeActivities,omitempty" jsonschema:"description=Default false"`
	CacheOption
}

// ImageInput names one image.
type ImageInput struct {
	ImageID string `json:"imageId" jsonschema:"minLength=1,maxLength=64"`
	CacheOption
}

// registerVisionTools registers the image tools (toolset vision).
func (v *Area) registerVisionTools() {
	sdk.AddTools(v.p,
		v.visionLoadImage(),
		v.visionListImages(),
		v.visionAnalyze(),
		v.visionBatchAnalyze(),
		v.visionCompare(),
		v.visionCompareAdvanced(),
		v.visionDetectObjects(),
		v.visionAnalyzeFaces(),
		v.visionClassifyScene(),
		v.visionExtractText(),
		v.visionAnalyzeChart(),
		v.visionAnalyzeColors(),
	)
}

// visionLoadImage declares vision_load_image.
func (v *Area) visionLoadImage() sdk.Tool[LoadImageInput, ImageOutput] {
	return sdk.Tool[LoadImageInput, ImageOutput]{
		Name:        "vision_load_image",
		Title:       "Load image",
		Description: "Load an image by path or base64 for the other vision tools; returns its imageId.",
		ReadOnly:    true, Idempotent: true, SuccessStatus: 201,
		Handler: func(_ context.Context, in LoadImageInput) (ImageOutput, error) {
			e, err := v.eng(false)
			if err != nil {
				return ImageOutput{}, err
			}
			var im *imaging.Image
			var again bool
			switch {
			case in.Path != "" && in.Data != "":
				return ImageOutput{}, errs.Invalid("data", "oneOf", "give path or data, not both")
			case in.Path != "":
				im, again, err = e.LoadImageFromPath(in.Path, in.Name)
			case in.Data != "":
				im, again, err = e.LoadImageFromBase64(in.Data, in.Name)
			default:
				return ImageOutput{}, errs.Invalid("path", "required", "give path (a file inside the workspace root) or data (base64)")
			}
			if err != nil {
				return ImageOutput{}, err
			}
			return ImageOutput{Image: *im, AlreadyLoaded: again}, nil
		},
	}
}

// visionListImages declares vision_list_images.
func (v *Area) visionListImages() sdk.Tool[struct{}, ImageListOutput] {
	return sdk.Tool[struct{}, ImageListOutput]{
		Name: "vision_list_images", Title: "List images",
		Description: "List the loaded images, most recently used first.",
		ReadOnly:    true, Idempotent: true,
		Handler: func(context.Context, struct{}) (ImageListOutput, error) {
			e, err := v.eng(false)
			if err != nil {
				return ImageListOutput{}, err
			}
			l := e.ListImages()
			return ImageListOutput{Images: l, Count: len(l)}, nil
		},
	}
}

// visionAnalyze declares vision_analyze.
func (v *Area) visionAnalyze() sdk.Tool[AnalyzeInput, imaging.AnalysisResult] {
	return sdk.Tool[AnalyzeInput, imaging.AnalysisResult]{
		Name: "vision_analyze", Title: "Analyse image", OpenWorld: true, ReadOnly: true,
		Description: "Ask the hosted model for one kind of analysis of a loaded image.",
		Handler: func(ctx context.Context, in AnalyzeInput) (imaging.AnalysisResult, error) {
			e, err := v.eng(true)
			if err != nil {
				return imaging.AnalysisResult{}, err
			}
			r, err := e.AnalyzeImage(ctx, in.ImageID, imaging.AnalysisType(in.AnalysisType), imaging.AnalyzeOptions{NoCache: in.noCache(), Question: in.Question})
			if err != nil {
				return imaging.AnalysisResult{}, err
			}
			return *r, nil
		},
	}
}

// visionBatchAnalyze declares vision_batch_analyze.
func (v *Area) visionBatchAnalyze() sdk.Tool[BatchInput, imaging.BatchResult] {
	return sdk.Tool[BatchInput, imaging.BatchResult]{
		Name: "vision_batch_analyze", Title: "Analyse images in a batch", OpenWorld: true, ReadOnly: true,
		// Up to 50 model calls: minutes (docs/decisions.md D39).
		TaskSupport: sdk.TaskOptional,
		Description: "Run one analysis over up to 50 loaded images, with progress.",
		Handler: func(ctx context.Context, in BatchInput) (imaging.BatchResult, error) {
			e, err := v.eng(true)
			if err != nil {
				return imaging.BatchResult{}, err
			}
			r, err := e.BatchAnalyzeImages(ctx, in.ImageIDs, imaging.AnalysisType(in.AnalysisType), imaging.BatchOptions{
				Concurrency: in.Concurrency, NoCache: in.noCache(), Question: in.Question,
				Progress: func(done, total int, id string, err error) {
					msg := fmt.Sprintf("analysed %s (%d of %d)", id, done, total)
					if err != nil {
						msg = fmt.Sprintf("failed %s (%d of %d): %s", id, done, total, errs.From(err).Code)
					}
					sdk.ReportProgress(ctx, float64(done), float64(total), msg)
				},
			})
			if err != nil {
				return imaging.BatchResult{}, err
			}
			return *r, nil
		},
	}
}

// visionCompare declares vision_compare.
func (v *Area) visionCompare() sdk.Tool[CompareInput, imaging.Comparison] {
	return sdk.Tool[CompareInput, imaging.Comparison]{
		Name: "vision_compare", Title: "Compare two images", OpenWorld: true, ReadOnly: true,
		// Two large images in one model call can take minutes.
		TaskSupport: sdk.TaskOptional,
		Description: "Compare two loaded images: similarities and differences.",
		Handler: func(ctx context.Context, in CompareInput) (imaging.Comparison, error) {
			e, err := v.eng(true)
			if err != nil {
				return imaging.Comparison{}, err
			}
			r, err := e.CompareImages(ctx, in.ImageID1, in.ImageID2, imaging.CompareOptions{Options: imaging.Options{NoCache: in.noCache()}, Detailed: in.Detailed})
			if err != nil {
				return imaging.Comparison{}, err
			}
			return *r, nil
		},
	}
}

// visionCompareAdvanced declares vision_compare_advanced.
func (v *Area) visionCompareAdvanced() sdk.Tool[CompareAdvancedInput, imaging.AdvancedComparison] {
	return sdk.Tool[CompareAdvancedInput, imaging.AdvancedComparison]{
		Name: "vision_compare_advanced", Title: "Compare two images in detail", OpenWorld: true, ReadOnly: true,
		Description: "Score two images' similarity and box their differences.",
		Handler: func(ctx context.Context, in CompareAdvancedInput) (imaging.AdvancedComparison, error) {
			e, err := v.eng(true)
			if err != nil {
				return imaging.AdvancedComparison{}, err
			}
			r, err := e.CompareImagesAdvanced(ctx, in.ImageID1, in.ImageID2, imaging.Options{NoCache: in.noCache()})
			if err != nil {
				return imaging.AdvancedComparison{}, err
			}
			return *r, nil
		},
	}
}

// visionDetectObjects declares vision_detect_objects.
func (v *Area) visionDetectObjects() sdk.Tool[DetectInput, imaging.DetectionResult] {
	return sdk.Tool[DetectInput, imaging.DetectionResult]{
		Name: "vision_detect_objects", Title: "Detect objects", OpenWorld: true, ReadOnly: true,
		Description: "List an image's objects with category, confidence and a coarse bounding box.",
		Handler: func(ctx context.Context, in DetectInput) (imaging.DetectionResult, error) {
			e, err := v.eng(true)
			if err != nil {
				return imaging.DetectionResult{}, err
			}
			r, err := e.DetectObjectsWithBoundingBoxes(ctx, in.ImageID, imaging.DetectOptions{Options: imaging.Options{NoCache: in.noCache()}, ConfidenceThreshold: in.ConfidenceThreshold, MaxObjects: in.MaxObjects, Categories: in.Categories})
			if err != nil {
				return imaging.DetectionResult{}, err
			}
			return *r, nil
		},
	}
}

// visionAnalyzeFaces declares vision_analyze_faces.
func (v *Area) visionAnalyzeFaces() sdk.Tool[FaceInput, imaging.FaceResult] {
	return sdk.Tool[FaceInput, imaging.FaceResult]{
		Name: "vision_analyze_faces", Title: "Describe faces", OpenWorld: true, ReadOnly: true,
		Description: "Describe visible faces objectively; never identifies anyone.",
		Handler: func(ctx context.Context, in FaceInput) (imaging.FaceResult, error) {
			e, err := v.eng(true)
			if err != nil {
				return imaging.FaceResult{}, err
			}
			r, err := e.AnalyzeFaces(ctx, in.ImageID, imaging.FaceOptions{Options: imaging.Options{NoCache: in.noCache()}, IncludeEmotions: in.IncludeEmotions, IncludeAttributes: in.IncludeAttributes, IncludeLandmarks: in.IncludeLandmarks})
			if err != nil {
				return imaging.FaceResult{}, err
			}
			return *r, nil
		},
	}
}

// visionClassifyScene declares vision_classify_scene.
func (v *Area) visionClassifyScene() sdk.Tool[SceneInput, imaging.SceneResult] {
	return sdk.Tool[SceneInput, imaging.SceneResult]{
		Name: "vision_classify_scene", Title: "Classify scene", OpenWorld: true, ReadOnly: true,
		Description: "Classify an image's scene: category, indoor, time of day, weather, mood.",
		Handler: func(ctx context.Context, in SceneInput) (imaging.SceneResult, error) {
			e, err := v.eng(true)
			if err != nil {
				return imaging.SceneResult{}, err
			}
			r, err := e.ClassifySceneAdvanced(ctx, in.ImageID, imaging.SceneOptions{Options: imaging.Options{NoCache: in.noCache()}, IncludeAttributes: in.IncludeAttributes, IncludeActivities: in.IncludeActivities})
			if err != nil {
				return imaging.SceneResult{}, err
			}
			return *r, nil
		},
	}
}

// visionExtractText declares vision_extract_text.
func (v *Area) visionExtractText() sdk.Tool[ImageInput, imaging.TextResult] {
	return sdk.Tool[ImageInput, imaging.TextResult]{
		Name: "vision_extract_text", Title: "Extract text (OCR)", OpenWorld: true, ReadOnly: true,
		Description: "Read an image's text in reading order.",
		Handler: func(ctx context.Context, in ImageInput) (imaging.TextResult, error) {
			e, err := v.eng(true)
			if err != nil {
				return imaging.TextResult{}, err
			}
			r, err := e.ExtractTextFromImage(ctx, in.ImageID, imaging.Options{NoCache: in.noCache()})
			if err != nil {
				return imaging.TextResult{}, err
			}
			return *r, nil
		},
	}
}

// visionAnalyzeChart declares vision_analyze_chart.
func (v *Area) visionAnalyzeChart() sdk.Tool[ImageInput, imaging.ChartResult] {
	return sdk.Tool[ImageInput, imaging.ChartResult]{
		Name: "vision_analyze_chart", Title: "Read chart data", OpenWorld: true, ReadOnly: true,
		Description: "Read a chart's type, axes, data points and trends.",
		Handler: func(ctx context.Context, in ImageInput) (imaging.ChartResult, error) {
			e, err := v.eng(true)
			if err != nil {
				return imaging.ChartResult{}, err
			}
			r, err := e.AnalyzeChartData(ctx, in.ImageID, imaging.Options{NoCache: in.noCache()})
			if err != nil {
				return imaging.ChartResult{}, err
			}
			return *r, nil
		},
	}
}

// visionAnalyzeColors declares vision_analyze_colors.
func (v *Area) visionAnalyzeColors() sdk.Tool[ImageInput, imaging.ColorResult] {
	return sdk.Tool[ImageInput, imaging.ColorResult]{
		Name: "vision_analyze_colors", Title: "Analyse colours", OpenWorld: true, ReadOnly: true,
		Description: "Describe an image's colours, with dominant colours, brightness and contrast measured from pixels.",
		Handler: func(ctx context.Context, in ImageInput) (imaging.ColorResult, error) {
			e, err := v.eng(true)
			if err != nil {
				return imaging.ColorResult{}, err
			}
			r, err := e.AnalyzeImageColors(ctx, in.ImageID, imaging.Options{NoCache: in.noCache()})
			if err != nil {
				return imaging.ColorResult{}, err
			}
			return *r, nil
		},
	}
}
